"""Shared by the daemon tests: the test token and a real `engram serve` subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOKEN = "test-token-" + "x" * 32
# The file store, whatever keyring this machine has (a developer's real keyring stays untouched).
NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Daemon:
    """A real `engram serve` subprocess on loopback, its log in a file."""

    def __init__(
        self,
        env: dict[str, str],
        vault: Path,
        log: Path,
        *args: str,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        self.vault = vault
        self.log = log
        self.env = {**os.environ, **NO_KEYRING, **env}
        self.discovery = vault / ".obsidian" / "plugins" / "engram" / "discovery.json"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engram", "serve", "--vault", str(vault), *args],
            env=self.env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            preexec_fn=preexec_fn,
        )
        self.info: dict[str, Any] = {}

    def wait_ready(self, timeout: float = 60) -> dict[str, Any]:
        """Wait until our discovery file is written and health answers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"engram serve exited early:\n{self.log.read_text()}")
            try:
                info = json.loads(self.discovery.read_text())
            except (OSError, ValueError):
                info = {}
            if info.get("pid") == self.proc.pid:
                self.info = info
                return info
            time.sleep(0.05)
        raise AssertionError(f"engram serve did not start:\n{self.log.read_text()}")

    def wait_indexed(self, timeout: float = 60) -> None:
        """Wait until the start-up indexing job has finished (searches see the vault)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _, status = self.call("GET", "/v1/status")
            indexing = (status or {}).get("indexing") or {}
            if indexing.get("state") == "idle" and indexing.get("lastJob"):
                return
            time.sleep(0.05)
        raise AssertionError(f"the start-up index did not finish:\n{self.log.read_text()}")

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        """A request with the daemon's token; returns (status, JSON)."""
        req = urllib.request.Request(
            self.info["url"] + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {token or self.info['token']}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal and wait for a clean exit; return the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)
