"""Start a real `engram serve` in an isolated environment for the load and fuzz scripts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Server:
    """A running daemon: its process, discovery data and log file."""

    proc: subprocess.Popen[bytes]
    info: dict[str, Any]
    log: Path
    discovery: Path

    @property
    def url(self) -> str:
        """Base URL."""
        return str(self.info["url"])

    @property
    def token(self) -> str:
        """Bearer token."""
        return str(self.info["token"])

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One authenticated request (status, JSON)."""
        req = urllib.request.Request(
            self.url + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def rss_mb(self) -> tuple[float, float]:
        """(current, peak) resident memory of the server in MB (Linux /proc)."""
        fields = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)

    def wait_idle(self, timeout: float = 600) -> dict[str, Any]:
        """Wait for the index job to finish; return the status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.call("GET", "/v1/status")[1]
            if status["indexing"]["state"] == "idle" and status["indexing"]["lastJob"]:
                return dict(status)
            time.sleep(0.2)
        raise SystemExit("indexing did not finish in time")

    def stop(self) -> int:
        """SIGTERM and wait; the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)


def isolated_env(work: Path) -> dict[str, str]:
    """XDG dirs inside `work`, the file token store, the repo's backend importable."""
    backend = Path(__file__).resolve().parents[1] / "backend"
    pythonpath = os.pathsep.join(p for p in (str(backend), os.environ.get("PYTHONPATH")) if p)
    return {
        **os.environ,
        "XDG_DATA_HOME": str(work / "data"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "XDG_CACHE_HOME": str(work / "cache"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PYTHONPATH": pythonpath,
    }


def start(vault: Path, work: Path, *args: str, timeout: float = 120, watch: bool = False) -> Server:
    """`engram serve --vault VAULT [--no-watch] ARGS` with its log in `work/serve.log`."""
    env = isolated_env(work)
    log = work / "serve.log"
    discovery = vault / ".obsidian" / "plugins" / "engram" / "discovery.json"
    flags = [] if watch else ["--no-watch"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "serve", "--vault", str(vault), *flags, *args],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"engram serve exited:\n{log.read_text()}")
        try:
            info = json.loads(discovery.read_text())
        except (OSError, ValueError):
            info = {}
        if info.get("pid") == proc.pid:
            return Server(proc, info, log, discovery)
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"engram serve did not start:\n{log.read_text()}")


def machine() -> str:
    """CPU count and load, so readers know how contended the numbers are."""
    load = os.getloadavg()
    return f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
