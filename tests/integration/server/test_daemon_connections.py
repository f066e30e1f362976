"""A real `engram serve` under the common 1,024-file limit stays answerable while another
process holds 1,100 connections open without the token, and its log stays small."""

from __future__ import annotations

import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from server_helpers import NO_KEYRING, Daemon

FILE_LIMIT = 1024
CONNECTIONS = 1100

# Another process: 1,100 connections to PORT, half sending nothing, half dribbling a header
# line every 2 s and never ending the headers; each one closed is opened again at once.
FLOOD = """
import asyncio, resource, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 200, max(n + 200, hard)))
count = {"connects": 0}

async def hold(i):
    while True:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.2)
            continue
        count["connects"] += 1
        if count["connects"] == n:
            print("ready", flush=True)
        try:
            if i % 2:
                writer.write(b"GET /v1/status HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")
            while not reader.at_eof():
                await asyncio.sleep(2)
                if i % 2:
                    writer.write(b"X-Slow: 1\\r\\n")
                    await writer.drain()
        except OSError:
            pass
        writer.close()

async def main():
    tasks = [asyncio.create_task(hold(i)) for i in range(n)]
    while True:
        await asyncio.sleep(1)
        print("connects", count["connects"], flush=True)

asyncio.run(main())
"""


@pytest.fixture
def env(xdg: dict[str, str]) -> dict[str, str]:
    """The isolated environment."""
    return {**xdg, **NO_KEYRING}


def limit_files() -> None:
    """In the daemon's process, before exec: the common soft and hard limit."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT))


def timed_status(info: dict[str, object], timeout: float = 10.0) -> float:
    """Seconds an authorised GET /v1/status takes (it must be 200)."""
    req = urllib.request.Request(
        f"{info['url']}/v1/status", headers={"Authorization": f"Bearer {info['token']}"}
    )
    start = time.monotonic()
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        assert resp.status == 200
        json.loads(resp.read())
    return time.monotonic() - start


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts open files in /proc")
@pytest.mark.skipif(
    resource.getrlimit(resource.RLIMIT_NOFILE)[1] < CONNECTIONS + 200,
    reason="the flood needs more open files than this machine allows a process",
)
def test_answers_while_another_process_holds_1100_slow_connections(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    d = Daemon(env, tiny_vault, tmp_path / "serve.log", "--no-watch", preexec_fn=limit_files)
    daemons.append(d)
    info = d.wait_ready()
    d.wait_indexed()
    # the plugin's keep-alive connection, idle between polls, is not what makes room
    kept = http.client.HTTPConnection("127.0.0.1", int(str(info["port"])), timeout=10)
    headers = {"Host": f"127.0.0.1:{info['port']}", "Authorization": f"Bearer {info['token']}"}
    kept.request("GET", "/v1/status", headers=headers)
    assert kept.getresponse().read() and kept.sock is not None
    kept_sock = kept.sock
    flood = subprocess.Popen(
        [sys.executable, "-c", FLOOD, str(info["port"]), str(CONNECTIONS)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert flood.stdout is not None
        deadline = time.monotonic() + 60
        while flood.stdout.readline().strip() != "ready":
            assert time.monotonic() < deadline and flood.poll() is None, "the flood never connected"
        times, most = [], 0
        for _ in range(6):
            times.append(timed_status(info))
            most = max(most, open_files(d.proc.pid))
            time.sleep(1.5)
        kept.request("GET", "/v1/status", headers=headers)
        assert kept.getresponse().status == 200 and kept.sock is kept_sock
    finally:
        kept.close()
        flood.kill()
        rest = flood.communicate()[0]
    connects = int(rest.split()[-1])
    assert max(times) < 3.0, times
    assert connects > CONNECTIONS  # the daemon closed some: it did not just hold them all
    assert most < FILE_LIMIT - 200, most  # headroom left for the index and the models
    assert d.stop() == 0
    log = d.log.read_text()
    assert "Traceback" not in log and "Too many open files" not in log
    assert len(log) < 10_000, log[-2000:]


def test_a_connection_that_sends_no_complete_headers_is_closed_within_seconds(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    d = Daemon(env, tiny_vault, tmp_path / "serve.log", "--no-watch")
    daemons.append(d)
    port = int(d.wait_ready()["port"])
    silent = socket.create_connection(("127.0.0.1", port))
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /v1/health HTTP/1.1\r\n")
    start = time.monotonic()
    for sock in (silent, slow):
        sock.settimeout(15)
        assert sock.recv(100) == b""  # closed by the daemon, nothing answered
        sock.close()
    assert time.monotonic() - start < 9
    # a client that completes its request in time is answered and kept alive
    ok = socket.create_connection(("127.0.0.1", port))
    ok.sendall(f"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    ok.settimeout(10)
    assert ok.recv(100).startswith(b"HTTP/1.1 200")
    ok.close()
