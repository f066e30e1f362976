"""Malformed lines to a real `engram mcp` (the official SDK on stdio), written raw since the
SDK's client cannot send them: each gets a JSON-RPC error with the request's id where it can
be read, and the server keeps answering."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.mcp_server.stdio import MAX_MESSAGE
from tests.integration.server.server_helpers import NO_KEYRING

pytestmark = pytest.mark.slow  # a real `engram mcp` process on stdio
ROOT = Path(__file__).resolve().parents[2]


class Wire:
    """An `engram mcp` subprocess spoken to line by line."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.selector = selectors.DefaultSelector()
        assert proc.stdout is not None
        self.selector.register(proc.stdout, selectors.EVENT_READ)

    def send(self, line: bytes | str) -> None:
        """One line (a newline added)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, Any]:
        """The next message from the server; fails rather than wait forever."""
        assert self.proc.stdout is not None
        assert self.selector.select(timeout), "no reply from engram mcp"
        return dict(json.loads(self.proc.stdout.readline()))

    def ask(self, line: bytes | str) -> dict[str, Any]:
        """Send a line and return the reply."""
        self.send(line)
        return self.receive()


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wire]:
    """An initialized `engram mcp --no-daemon` over an empty index, shared by the module (one
    server must survive every line sent to it)."""
    root = tmp_path_factory.mktemp("mcp-wire")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")},
        **{
            k: str(root / k.lower()) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
        },
        **NO_KEYRING,
        "PYTHONPATH": str(ROOT / "backend"),
    }
    with (root / "mcp.log").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engram", "mcp", "--no-daemon"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
        )
    w = Wire(proc)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    hello["clientInfo"]["version"] = "1"
    reply = w.ask(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
    assert "result" in reply
    w.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    yield w
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


def call(request_id: int, arguments: str) -> str:
    """A tools/call of `query` with the arguments' JSON text as given."""
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "query", "arguments": {arguments}}}}}'
    )


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (call(1, '{"q": "\\ud800"}'), -32700, 1),  # a lone surrogate escape
        (call(2, '{"q": ' + "[" * 100_000 + "]" * 100_000 + "}"), -32700, 2),
        ("not json", -32700, None),
        ('{"jsonrpc": "2.0", "id": "x-4"}', -32600, "x-4"),  # no method
        ("[1, 2]", -32600, None),
        (call(6, '{"q": "' + "a" * MAX_MESSAGE + '"}'), -32600, 6),  # over the size cap
    ],
)
def test_a_malformed_request_gets_an_error_reply_and_the_server_lives_on(
    wire: Wire, line: str, code: int, request_id: Any
) -> None:
    reply = wire.ask(line)
    assert reply["error"]["code"] == code, reply
    assert reply["id"] == request_id
    if "ud800" in line:
        assert "without its pair" in reply["error"]["message"]
    listed = wire.ask('{"jsonrpc": "2.0", "id": 99, "method": "tools/list"}')
    assert listed["id"] == 99 and listed["result"]["tools"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('{"q": "pricing", "n": NaN}', "NaN and Infinity are not numbers"),
        ('{"q": "a\\u0000b"}', "must not contain NUL"),
        ('{"q": "' + "x" * 5000 + '"}', "q is too long (at most 2,000 characters)"),
    ],
)
def test_arguments_json_schema_lets_through_are_a_tool_error(
    wire: Wire, arguments: str, message: str
) -> None:
    reply = wire.ask(call(7, arguments))
    assert reply["result"]["isError"] is True
    text = reply["result"]["content"][0]["text"]
    assert message in text and len(text) < 1000
