"""The daemon's background sync against a deployment whose cursor never moves: the run ends
and `GET /v1/status` says why, instead of `syncing` for ever."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.integration.server.server_helpers import Daemon
from tests.integration.sync.hostile import fact, hostile, page
from tests.integration.sync.test_sync_hostile import cli_env


def test_the_daemon_shows_a_stuck_pull_as_an_error(tmp_path: Path) -> None:
    stuck = fact("e" * 32, 1, "The only fact a stuck deployment sends.")
    with hostile(lambda args, n: page([stuck], "1700:stuck", False)) as server:
        env = cli_env(tmp_path, server.url, "--interval", "5")
        vault = tmp_path / "cli" / "vault"
        daemon = Daemon(env, vault, tmp_path / "daemon.log")
        try:
            daemon.wait_ready()
            info = wait_for_sync(daemon, lambda s: s.get("state") == "error", 40)
            calls = len(server.calls)
        finally:
            daemon.stop()
    assert "cursor did not move" in info["lastError"], info
    assert info["cursor"] == "1700:stuck" and calls <= 4  # one run, two pages (or two runs)
    assert any(vault.rglob(f"*-{'e' * 8}.md"))  # what the page held was applied


def wait_for_sync(daemon: Daemon, ok: Any, timeout: float) -> dict[str, Any]:
    """The sync block of GET /v1/status once `ok(block)` holds."""
    deadline = time.monotonic() + timeout
    seen: dict[str, Any] = {}
    while time.monotonic() < deadline:
        _, body = daemon.call("GET", "/v1/status")
        seen = (body or {}).get("sync") or {}
        if ok(seen):
            return seen
        time.sleep(0.25)
    raise AssertionError(f"sync status stayed {seen}")
