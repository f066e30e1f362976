"""Hostile bytes on the wire of a real `engram serve`: each gets a 4xx (or nothing), never a
500; none becomes the status's lastError; the log file gets no raw control character."""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Iterator

import pytest
from server_helpers import NO_KEYRING, Daemon

from tests.conftest import TINY_VAULT, write_tree

# A raw control character in the log (tab and newline are the log's own layout).
RAW_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon on a copy of the tiny vault, shared by the tests of this module."""
    root = tmp_path_factory.mktemp("hostile")
    paths = os.environ.get("PYTHONPATH", "")
    env = {
        **{
            k: str(root / k.lower()) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
        },
        **NO_KEYRING,
        "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in paths.split(os.pathsep) if p),
    }
    d = Daemon(env, write_tree(root / "vault", TINY_VAULT), root / "serve.log", "--no-watch")
    d.wait_ready()
    d.wait_indexed()  # the last test searches the vault
    yield d
    assert d.stop() == 0


def send(d: Daemon, data: bytes, *, hang_up: bool = False) -> bytes:
    """Raw bytes to the daemon (no client library to tidy them); its whole answer."""
    with socket.create_connection(("127.0.0.1", d.info["port"]), timeout=30) as sock:
        sock.sendall(data)
        if hang_up:
            return b""
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def head(d: Daemon, request_line: str, *headers: str) -> bytes:
    """A request line and headers (Host and Connection: close added), as bytes."""
    lines = [request_line, f"Host: 127.0.0.1:{d.info['port']}", *headers, "Connection: close"]
    return ("\r\n".join(lines) + "\r\n").encode()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def assert_clean(d: Daemon) -> None:
    """No error recorded for the status bar, and a log with no raw control character."""
    code, status = d.call("GET", "/v1/status")
    assert code == 200
    assert status["lastError"] is None
    log = d.log.read_bytes()
    assert b"Traceback" not in log
    assert RAW_CONTROL.search(log) is None, RAW_CONTROL.search(log)


def test_non_utf8_bytes_in_the_authorization_header_are_401(daemon: Daemon) -> None:
    answer = send(daemon, head(daemon, "GET /v1/status HTTP/1.1") + b"Authorization: Bearer "
                  b"\xff\xfe\xc3(\r\n\r\n")  # fmt: skip
    assert status_of(answer) == 401
    assert b'"unauthorized"' in answer
    assert_clean(daemon)


def test_json_nested_100k_deep_is_400_naming_the_limit(daemon: Daemon) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    answer = send(
        daemon,
        head(
            daemon,
            "POST /v1/query HTTP/1.1",
            f"Authorization: Bearer {daemon.info['token']}",
            f"Content-Length: {len(body)}",
        )
        + b"\r\n"
        + body,
    )
    assert status_of(answer) == 400
    assert b"nested too deeply (limit 32 levels)" in answer
    assert_clean(daemon)


def test_a_client_hanging_up_mid_body_is_not_an_error(daemon: Daemon) -> None:
    start = head(
        daemon,
        "POST /v1/facts HTTP/1.1",
        f"Authorization: Bearer {daemon.info['token']}",
        "Content-Length: 1000",
    )
    send(daemon, start + b'\r\n{"text": "half a fa', hang_up=True)
    deadline = time.monotonic() + 20
    while b"POST /v1/facts 499" not in daemon.log.read_bytes():
        assert time.monotonic() < deadline, daemon.log.read_text()
        time.sleep(0.05)
    assert_clean(daemon)


def test_control_characters_in_a_path_are_escaped_in_the_log(daemon: Daemon) -> None:
    forged = "/v1/x%0A2026-01-01 00:00:00,000 INFO aiohttp.access: GET /v1/forged 200 1.0ms"
    target = forged.replace(" ", "%20") + "%1b[31m%1b]0;evil%07%c2%9b"
    answer = send(daemon, head(daemon, f"GET {target} HTTP/1.1") + b"\r\n")
    assert status_of(answer) == 401  # no token: refused before any route
    log = daemon.log.read_text()
    line = next(x for x in log.splitlines() if "/v1/x" in x)
    assert "/v1/x\\n2026-01-01" in line and "\\x1b[31m\\x1b]0;evil\\x07\\x9b 401" in line
    assert not any(x.startswith("2026-01-01") for x in log.splitlines())
    assert_clean(daemon)


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE\r\nHOST\r\n\r\n",  # no method, no version
        b"GET /v1/status HTTP/1.1\r\nHOST\r\nX: a\x00b\r\n\r\n",  # NUL in a header
        b"GET /v1/\xff HTTP/1.1\r\nHOST\r\n\r\n",  # a raw byte in the path
        b"GET /v1/status HTTP/1.1\r\nHOST\r\nX: " + b"a" * 70_000 + b"\r\n\r\n",  # field cap
        b"POST /v1/query HTTP/1.1\r\nHOST\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + b"\x00" * 64,  # TLS, not HTTP
    ],
)
def test_malformed_http_is_a_400_without_its_bytes_in_the_log(daemon: Daemon, raw: bytes) -> None:
    answer = send(daemon, raw.replace(b"HOST", f"Host: 127.0.0.1:{daemon.info['port']}".encode()))
    assert status_of(answer) == 400
    assert_clean(daemon)


def test_a_body_aiohttp_cannot_decode_is_400(daemon: Daemon) -> None:
    answer = send(
        daemon,
        head(
            daemon,
            "POST /v1/query HTTP/1.1",
            f"Authorization: Bearer {daemon.info['token']}",
            "Content-Encoding: gzip",
            "Content-Length: 8",
        )
        + b"\r\nnot gzip",
    )
    assert status_of(answer) == 400
    assert b"Can not decode content-encoding" in answer
    assert_clean(daemon)


def test_a_date_outside_the_calendar_is_400(daemon: Daemon) -> None:
    body = {"q": "x", "since": "last 99999999999 weeks"}  # was an OverflowError: a 500
    code, answer = daemon.call("POST", "/v1/recall", body)
    assert code == 400, answer
    assert "outside years 1 to 9999" in answer["error"]["message"]
    # in the query itself such a phrase names no time: its words are searched, as typed
    code, answer = daemon.call("POST", "/v1/recall", {"q": "notes from 99999999999 years ago"})
    assert code == 200 and answer["window"] is None, answer
    assert_clean(daemon)


def test_the_daemon_still_answers_after_all_of_it(daemon: Daemon) -> None:
    code, found = daemon.call("POST", "/v1/query", {"q": "pricing"})
    assert code == 200 and found["results"]
    assert_clean(daemon)
