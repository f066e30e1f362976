"""The MCP stdin reader: which lines are answered here, with which id, in bounded memory."""

from __future__ import annotations

import io
from typing import Any

import anyio
import pytest

from engram.mcp_server.stdio import Lines, refusal, request_id

OK = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (OK, 1),
        ('{"jsonrpc": "2.0", "id": "a-1", "params": {"id": 3}}', "a-1"),
        ('{"id": 5, "params": ' + "[" * 5000, 5),  # cut off: members before the break count
        ('{"jsonrpc": "2.0", "params": ' + "[" * 5000 + "]" * 5000 + ', "id": 6}', None),
        ('{"id": "\\ud800"}', None),  # not text: no reply could carry it
        ('{"id": true}', None),
        ('{"id": 1e3}', None),
        ('{"id": 123456789012345678901234567890}', None),
        ('{"id": null}', None),
        ("[1]", None),
        ("", None),
        ("{", None),
    ],
)
def test_request_id(line: str, expected: Any) -> None:
    assert request_id(line) == expected


@pytest.mark.parametrize(
    ("line", "whole", "code"),
    [
        (OK, True, None),
        ('{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"q": "\\ud800"}}', True, -32700),
        ("{oops", True, -32700),
        ('{"jsonrpc": "2.0", "id": 1}', True, -32600),
        ('{"jsonrpc": "1.0", "id": 1, "method": "x"}', True, -32600),
        (OK, False, -32600),  # cut at the size limit
    ],
)
def test_refusal(line: str, whole: bool, code: int | None) -> None:
    error = refusal(line, whole, 100)
    assert (error.error.code if error else None) == code


def test_lines_pass_good_ones_on_and_answer_the_others() -> None:
    stream = io.BytesIO(
        b"\n".join([OK.encode(), b"x" * 5000 + b' "id": 2', b"", b"not json", OK.encode()]) + b"\n"
    )

    async def read() -> tuple[list[str], list[Any]]:
        lines = Lines(stream, limit=1000)
        answered: list[Any] = []

        async def drain() -> None:  # what the forwarder does with them
            async for message in lines.rejected:
                answered.append(message.message)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(drain)
            passed = [line async for line in lines]
        return passed, answered

    passed, answered = anyio.run(read)
    assert passed == [OK + "\n", OK + "\n"]
    assert [(m.error.code, m.id) for m in answered] == [(-32600, None), (-32700, None)]
