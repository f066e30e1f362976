"""Reading stdin for the MCP SDK so that every line gets an answer.

The SDK's stdio reader (mcp 2.3) parses each line and hands a failure to the session, which
logs it at DEBUG and drops it: a client that sent a lone surrogate escape, JSON nested deeper
than the parser's limit, or anything not JSON-RPC, waits forever for its reply. The SDK takes
a `stdin` of our own, so we read the lines, bounded in size, check each with the SDK's own
parser, answer one it would drop with a JSON-RPC error (-32700 not JSON, -32600 not a
JSON-RPC message; the request's id when it can be read) and pass the others on.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

MAX_MESSAGE = 8 * 1024 * 1024  # bytes in one line; a note body of 1M characters fits
_DRAIN = 1024 * 1024
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_ID_LIMIT = 2**53  # what a JavaScript client can read back exactly


class Lines:
    """stdin as text lines for the SDK's reader; a line it would drop is answered here, on
    `rejected`, instead of being passed on."""

    def __init__(self, stream: BinaryIO, limit: int = MAX_MESSAGE) -> None:
        self.stream = stream
        self.limit = limit
        self._send: MemoryObjectSendStream[SessionMessage]
        self._send, self.rejected = anyio.create_memory_object_stream[SessionMessage](16)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async with self._send:
            while True:
                raw, whole = await anyio.to_thread.run_sync(self._readline)
                if not raw:
                    return
                line = raw.decode("utf-8", errors="replace")  # as the SDK's reader does
                if not line.strip():
                    continue  # not a message: nothing was asked, nothing to answer
                error = refusal(line, whole, self.limit)
                if error is None:
                    yield line
                else:
                    await self._send.send(SessionMessage(error))

    def _readline(self) -> tuple[bytes, bool]:
        """The next line (b"" at the end) and whether it is whole: a longer one is cut to
        `limit` bytes and the rest read and thrown away, so memory stays bounded."""
        line = self.stream.readline(self.limit + 1)
        if len(line) <= self.limit or line.endswith(b"\n"):
            return line, True
        while (rest := self.stream.readline(_DRAIN)) and not rest.endswith(b"\n"):
            pass
        return line[: self.limit], False


def refusal(line: str, whole: bool, limit: int) -> types.JSONRPCError | None:
    """The error answering `line`, or None when the SDK will take it."""
    if whole:
        try:
            types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            return None
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == "json_invalid":
                code, message = types.PARSE_ERROR, f"Parse error: {first['msg']}"
                if _SURROGATE.search(line):
                    message += " (a \\ud800-\\udfff escape without its pair is not text)"
            else:
                code, message = types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message"
    else:
        code, message = types.INVALID_REQUEST, f"Invalid request: a message over {limit:,} bytes"
    error = types.ErrorData(code=code, message=message)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id(line), error=error)


def request_id(line: str) -> str | int | None:
    """The id of a message we refuse, when it can be read (the client waits on it): from the
    whole message, else from the members before the first one that does not parse."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        data = _leading_members(line)
    value = data.get("id") if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    if isinstance(value, int):
        return value if abs(value) < _ID_LIMIT else None
    return value if value.isprintable() and len(value) <= 256 else None


def _leading_members(text: str) -> dict[str, Any]:
    """The members of a JSON object read in order until one fails (too deep, cut off...)."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] = {}
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return found
    try:
        while True:
            key, at = decoder.raw_decode(text, _skip(text, at + 1))
            at = _skip(text, at)
            if not text.startswith(":", at):
                return found
            value, at = decoder.raw_decode(text, _skip(text, at + 1))
            if isinstance(key, str):
                found[key] = value
            at = _skip(text, at)
            if not text.startswith(",", at):
                return found
    except (ValueError, RecursionError):
        return found


def _skip(text: str, at: int) -> int:
    """The index of the first non-whitespace character from `at`."""
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


async def forward(rejected: MemoryObjectReceiveStream[SessionMessage], write: Any) -> None:
    """Send the answers to refused lines to the client (on a clone of the SDK's write stream,
    so the SDK's writer stays open until the last one is out)."""
    async with rejected, write.clone() as out:
        async for message in rejected:
            await out.send(message)


def claim_stdin() -> BinaryIO:
    """The process's stdin for the protocol alone: fd 0 then points at the null device, so a
    child process cannot read a message meant for us (what the SDK does when it reads)."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(wire, "rb")
