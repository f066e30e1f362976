"""One truth for configuration: what the CLI (or a person editing the file) changes while a
daemon serves the index reaches the daemon within two seconds, without a restart."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from server_helpers import Daemon

from engram import config
from engram.service import Engram
from tests.conftest import EngramCli

DEADLINE = 2.0


def until(test: Any, seconds: float) -> float:
    """Seconds until `test()` is true; fails past `seconds`."""
    started = time.monotonic()
    while not test():
        assert time.monotonic() - started < seconds, "the daemon kept the old configuration"
        time.sleep(0.05)
    return time.monotonic() - started


@pytest.mark.slow  # a real `engram serve`; the CLI runs in this process and finds it by its files
def test_context_and_collection_changes_reach_a_running_daemon(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Pricing.md").write_text("# Pricing\n\nUsage based pricing for the team.\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "Espresso.md").write_text("# Espresso\n\nGrinder settings for espresso.\n")
    run(xdg, "init", str(vault), "--name", "vault")
    d = Daemon(xdg, vault, tmp_path / "serve.log", "--no-watch")
    try:
        d.wait_ready()
        d.wait_indexed()

        def context_of_first_hit() -> Any:
            hits = d.call("POST", "/v1/query", {"q": "pricing"})[1]["results"]
            return hits[0]["context"] if hits else None

        assert context_of_first_hit() is None
        run(xdg, "context", "add", "engram://vault/", "The team's product notes")
        took = until(lambda: context_of_first_hit() == "The team's product notes", 10)
        assert took <= DEADLINE + 1.0, took  # the daemon looks once a second
        # the CLI, which goes through the daemon while it serves this index, agrees
        out = run.json(xdg, "search", "pricing")
        assert out[0]["context"] == "The team's product notes"

        run(xdg, "collection", "add", str(other), "--name", "other")
        found = {"q": "espresso grinder", "collections": ["other"]}
        until(lambda: d.call("POST", "/v1/query", found)[0] == 200, DEADLINE + 1.0)
        hits = d.call("POST", "/v1/query", found)[1]["results"]
        assert hits and hits[0]["path"] == "Espresso.md"

        run(xdg, "collection", "remove", "other")
        until(lambda: d.call("POST", "/v1/query", found)[0] == 404, DEADLINE + 1.0)
    finally:
        d.proc.kill()
        d.proc.wait()


def test_a_config_file_edited_by_hand_is_taken_in_and_a_broken_one_is_not(
    xdg: dict[str, str], tmp_path: Path
) -> None:
    """The same path in-process: a long-lived facade (the daemon's, an MCP server's) reads the
    file again when it changes; a file a person is halfway through editing changes nothing."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nText.\n")
    with Engram(config.resolve(os.environ)) as e:
        e.collection_add(str(vault), "vault")
        path = e.settings.config_file
        raw = config.load_config_file(path)
        raw["global_context"] = "Everything here is about coffee"
        path.write_text(config.dump_config(raw))
        until(lambda: e.settings.global_context == "Everything here is about coffee", 3)
        path.write_text("collections: [unclosed\n")
        time.sleep(1.2)
        assert e.settings.global_context == "Everything here is about coffee"
        assert e.settings.collection("vault") is not None


def test_the_environment_still_wins_over_a_reread_file(
    xdg: dict[str, str], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("ENGRAM_EMBED_MODEL", "none")
    with Engram(config.resolve(os.environ)) as e:
        path = e.settings.config_file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("models:\n  embed: /somewhere/else.gguf\n  rerank: /a/reranker.gguf\n")
        until(lambda: e.settings.rerank_model == "/a/reranker.gguf", 3)
        assert e.settings.embed_model is None
