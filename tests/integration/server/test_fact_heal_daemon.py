"""The daemon finishes what a killed `fact add` left: its index job for the new note adds the
missing ledger line (once) while the daemon keeps running."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from server_helpers import NO_KEYRING, Daemon

from engram import config
from engram.service import Engram


@pytest.mark.slow  # a SIGKILLed `fact add` process and a real `engram serve`
def test_the_daemons_index_job_adds_the_ledger_line_a_killed_fact_add_left_out(
    daemons: list[Daemon], xdg: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    with Engram(config.resolve(os.environ)) as e:
        e.init_vault(str(tiny_vault), name="notes")
    env = {**xdg, **NO_KEYRING}
    daemon = Daemon(env, tiny_vault, tmp_path / "serve.log")
    daemons.append(daemon)
    daemon.wait_ready()
    daemon.wait_indexed()
    killed = subprocess.run(  # in its own process (not the daemon's), dead right after its note
        [sys.executable, "-m", "engram", "fact", "add", "--no-daemon", "We decided to ship."],
        env={**os.environ, **env, "ENGRAM_TEST_CRASH_AFTER_RENAMES": "1"},
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL
    [note] = (tiny_vault / "Engram" / "decisions").glob("*.md")
    ref = re.search(r"^id: ([0-9a-f]{8})", note.read_text("utf-8"), re.M)
    assert ref is not None
    ledger = tiny_vault / "Engram" / "ledger" / "observations"
    deadline = time.monotonic() + 30
    lines: list[str] = []
    while time.monotonic() < deadline and not lines:
        time.sleep(0.2)
        text = "".join(p.read_text("utf-8") for p in ledger.rglob("*.md"))
        lines = re.findall(rf"\^fact-{ref.group(1)}$", text, re.M)
    assert lines == [f"^fact-{ref.group(1)}"], daemon.log.read_text()
    status, listed = daemon.call("GET", "/v1/facts")
    assert status == 200 and [f["path"] for f in listed["facts"]] == [
        note.relative_to(tiny_vault).as_posix()
    ]
    assert "Traceback" not in daemon.log.read_text()
