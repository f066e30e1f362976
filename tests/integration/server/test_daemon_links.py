"""A real `engram serve`: a note renamed in the folder (the watcher) or through the HTTP move
keeps its backlinks in the fact panel (issue 15)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from server_helpers import NO_KEYRING, Daemon

from tests.conftest import write_tree


def backlinks(d: Daemon, path: str) -> list[str]:
    status, panel = d.call("GET", "/v1/notes/metadata?path=" + path.replace(" ", "%20"))
    return [b["path"] for b in panel.get("backlinks", [])] if status == 200 else []


def wait_for(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_renames_keep_backlinks_in_the_daemon(
    daemons: list[Daemon], xdg: dict[str, str], tmp_path: Path
) -> None:
    vault = write_tree(
        tmp_path / "vault",
        {
            "Home.md": "[[Pricing Model]]\n",
            "Projects/Pricing Model.md": "# Pricing Model\n",
            ".obsidian/app.json": "{}",
        },
    )
    paths = os.environ.get("PYTHONPATH", "")
    env = {
        **xdg,
        **NO_KEYRING,
        "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in paths.split(os.pathsep) if p),
    }
    d = Daemon(env, vault, tmp_path / "serve.log", "--debounce", "0.3")
    daemons.append(d)
    d.wait_ready()
    wait_for(lambda: backlinks(d, "Projects/Pricing Model.md") == ["Home.md"], 30, "first index")

    # renamed outside Obsidian's link updater: the watcher sees both files change
    (vault / "Projects/Pricing Model.md").rename(vault / "Projects/Pricing Plan.md")
    (vault / "Home.md").write_text("[[Pricing Plan]]\n", encoding="utf-8")
    wait_for(lambda: backlinks(d, "Projects/Pricing Plan.md") == ["Home.md"], 30, "the watcher")

    status, moved = d.call(
        "POST", "/v1/notes/move", {"path": "Projects/Pricing Plan.md", "to": "Projects/Plan.md"}
    )
    assert status == 200, moved
    assert moved["change"]["linksRewritten"] == 1
    assert backlinks(d, "Projects/Plan.md") == ["Home.md"]
    assert (vault / "Home.md").read_text(encoding="utf-8") == "[[Plan]]\n"
