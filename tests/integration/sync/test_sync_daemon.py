"""`engram sync` from the command line, and two daemons syncing in the background."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.server.server_helpers import NO_KEYRING, Daemon
from tests.integration.sync.conftest import SYNC_TOKEN, Double


def cli(env: dict[str, str], *args: str, ok: bool = True, stdin: str | None = None) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "engram", *args],
        env={**os.environ, **NO_KEYRING, **env},
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
    )
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def cli_json(env: dict[str, str], *args: str) -> Any:
    return json.loads(cli(env, *args, "--json").stdout)


def setup_machine(tmp: Path, name: str, url: str) -> tuple[dict[str, str], Path]:
    home = tmp / name
    vault = home / "vault"
    vault.mkdir(parents=True)
    env = {
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "ENGRAM_EMBED_MODEL": "none",
        "NO_COLOR": "1",
    }
    cli(env, "init", str(vault), "--name", "vault")
    info = cli_json(
        {**env, "ENGRAM_SYNC_TOKEN": SYNC_TOKEN},
        "sync",
        "init",
        "--url",
        url,
        "--device",
        name,
        "--interval",
        "5",
    )
    assert info["checked"] and info["credentials"] == "file" and info["device"] == name
    return env, vault


def wait_for(what: Callable[[], Any], timeout: float = 40) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError("timed out waiting")


def test_the_sync_commands(tmp_path: Path, double: Double) -> None:
    env, _ = setup_machine(tmp_path, "a", double.url)
    assert SYNC_TOKEN not in (tmp_path / "a" / "config" / "engram" / "index.yml").read_text()
    fact = cli_json(env, "fact", "add", "We chose Convex for sync.")
    status = cli_json(env, "sync", "status")
    assert status["configured"] and status["pending"] == 1 and status["lastSync"] is None
    assert cli(env, "sync", "check", ok=False).returncode == 1  # a fact waits to be pushed
    report = cli_json(env, "sync")
    assert report["pushed"] == 1 and report["error"] is None
    assert cli_json(env, "sync", "check")["inStep"]
    assert cli_json(env, "sync", "push")["pushed"] == 0
    pulled = cli_json(env, "sync", "pull")
    assert pulled["error"] is None and pulled["pulled"] == 0  # the cursor is past it
    human = cli(env, "sync", "status").stdout
    assert "0 pending" in human and double.url in human
    assert double.facts()[fact["id"]]["title"] == "We chose Convex for sync."
    assert cli_json(env, "fact", "show", fact["id"])["syncState"] == "synced"
    cli(
        {**env, "ENGRAM_SYNC_TOKEN": SYNC_TOKEN},
        "sync",
        "init",
        "--no-check",
        "--url",
        "http://127.0.0.1:9",
    )  # nothing listens there: offline
    cli(env, "fact", "add", "Offline facts wait in the outbox.")
    failed = cli(env, "sync", ok=False)
    assert failed.returncode == 1 and "cannot reach Convex" in failed.stdout
    assert cli_json(env, "sync", "status")["pending"] == 1
    wrong = cli(
        {**env, "ENGRAM_SYNC_TOKEN": "wrong"}, "sync", "init", "--url", double.url, ok=False
    )
    assert wrong.returncode == 1 and "wrong sync token" in wrong.stderr
    assert "wrong" not in wrong.stderr.replace("wrong sync token", "")


@pytest.fixture
def two_daemons(tmp_path: Path, double: Double) -> Iterator[list[tuple[Daemon, dict[str, str]]]]:
    started = []
    for name in ("a", "b"):
        env, vault = setup_machine(tmp_path, name, double.url)
        daemon = Daemon(env, vault, tmp_path / f"{name}.log", "--debounce", "0.3")
        daemon.wait_ready()
        started.append((daemon, env))
    yield started
    for daemon, _ in started:
        daemon.stop()


def fact_notes(vault: Path) -> dict[str, str]:
    out = {}
    for path in (vault / "Engram").rglob("*.md"):
        rel = path.relative_to(vault).as_posix()
        if "/daily/" not in rel and "/ledger/" not in rel:
            out[rel] = path.read_text(encoding="utf-8")
    return out


def test_two_daemons_sync_in_the_background(
    two_daemons: list[tuple[Daemon, dict[str, str]]], double: Double
) -> None:
    (a, a_env), (b, _) = two_daemons
    status, body = a.call("POST", "/v1/facts", {"text": "The release train leaves on Tuesdays."})
    assert status in (200, 201), body
    fid = body["fact"]["id"]
    wait_for(lambda: fid in double.facts())  # pushed soon after the change, unasked
    rel = wait_for(lambda: next((r for r in fact_notes(b.vault) if fid[:8] in r), None))
    status, info = b.call("GET", "/v1/status")
    assert info["sync"]["configured"] and info["sync"]["state"] in ("idle", "syncing")
    note = b.vault / rel
    note.write_text(note.read_text().replace("Tuesdays", "Thursdays"), encoding="utf-8")
    wait_for(lambda: "Thursdays" in double.facts()[fid]["text"])  # watcher → outbox → push
    a_note = next(p for p in (a.vault / "Engram").rglob(f"*{fid[:8]}.md"))
    wait_for(lambda: "Thursdays" in a_note.read_text())
    report = cli_json(a_env, "sync")  # through the daemon's writer
    assert report["error"] is None
    assert "POST /v1/sync" in a.log.read_text()
    status, info = a.call("GET", "/v1/status")
    assert info["sync"]["pending"] == 0 and info["sync"]["lastSync"]
