"""`engram sync` from the command line, and two daemons syncing in the background."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EngramCli
from tests.integration.server.server_helpers import Daemon
from tests.integration.sync.conftest import SYNC_TOKEN, Double


def setup_machine(run: EngramCli, tmp: Path, name: str, url: str) -> tuple[dict[str, str], Path]:
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
    run(env, "init", str(vault), "--name", "vault")
    info = run.json(
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


def test_the_sync_commands(run: EngramCli, tmp_path: Path, double: Double) -> None:
    env, _ = setup_machine(run, tmp_path, "a", double.url)
    assert SYNC_TOKEN not in (tmp_path / "a" / "config" / "engram" / "index.yml").read_text()
    fact = run.json(env, "fact", "add", "We chose Convex for sync.")
    status = run.json(env, "sync", "status")
    assert status["configured"] and status["pending"] == 1 and status["lastSync"] is None
    assert run(env, "sync", "check", ok=False).returncode == 1  # a fact waits to be pushed
    report = run.json(env, "sync")
    assert report["pushed"] == 1 and report["error"] is None
    assert run.json(env, "sync", "check")["inStep"]
    assert run.json(env, "sync", "push")["pushed"] == 0
    pulled = run.json(env, "sync", "pull")
    assert pulled["error"] is None and pulled["pulled"] == 0  # the cursor is past it
    human = run(env, "sync", "status").stdout
    assert "0 pending" in human and double.url in human
    assert double.facts()[fact["id"]]["title"] == "We chose Convex for sync."
    assert run.json(env, "fact", "show", fact["id"])["syncState"] == "synced"
    run(
        {**env, "ENGRAM_SYNC_TOKEN": SYNC_TOKEN},
        "sync",
        "init",
        "--no-check",
        "--url",
        "http://127.0.0.1:9",
    )  # nothing listens there: offline
    run(env, "fact", "add", "Offline facts wait in the outbox.")
    failed = run(env, "sync", ok=False)
    assert failed.returncode == 1 and "cannot reach Convex" in failed.stdout
    assert run.json(env, "sync", "status")["pending"] == 1
    wrong = run(
        {**env, "ENGRAM_SYNC_TOKEN": "wrong"}, "sync", "init", "--url", double.url, ok=False
    )
    assert wrong.returncode == 1 and "wrong sync token" in wrong.stderr
    assert "wrong" not in wrong.stderr.replace("wrong sync token", "")


@pytest.fixture
def two_daemons(
    run: EngramCli, tmp_path: Path, double: Double
) -> Iterator[list[tuple[Daemon, dict[str, str]]]]:
    started = []
    for name in ("a", "b"):
        env, vault = setup_machine(run, tmp_path, name, double.url)
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


@pytest.mark.slow  # two real `engram serve`; the CLI runs in this process
def test_two_daemons_sync_in_the_background(
    run: EngramCli, two_daemons: list[tuple[Daemon, dict[str, str]]], double: Double
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
    report = run.json(a_env, "sync")  # through the daemon's writer
    assert report["error"] is None
    assert "POST /v1/sync" in a.log.read_text()
    status, info = a.call("GET", "/v1/status")
    assert info["sync"]["pending"] == 0 and info["sync"]["lastSync"]
