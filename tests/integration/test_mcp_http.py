"""MCP over Streamable HTTP from a real `engram serve`, driven by the official SDK's client: the
same tools as stdio behind the daemon's token and Host/Origin checks, several agents sharing
one process, and a client that disconnects mid-call leaving nothing half-written."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from engram.mcp_server.profiles import LEAN, TOOLS
from tests.integration.server.server_helpers import Daemon

pytestmark = pytest.mark.slow  # a real `engram serve`
BODY = "# Tasting notes\n\n" + "A bright, clean cup with notes of citrus.\n" * 6000  # ~250 kB


@pytest.fixture
def daemon(xdg: dict[str, str], tmp_path: Path) -> AsyncIterator[Daemon]:
    """`engram serve` on a small vault, indexed."""
    vault = tmp_path / "Vault"
    vault.mkdir()
    (vault / "Pricing.md").write_text("# Pricing\n\nThree tiers: basic, plus, pro.\n")
    (vault / "Home.md").write_text("# Home\n\nSee [[Pricing]].\n")
    d = Daemon({}, vault, tmp_path / "serve.log", "--no-watch")
    try:
        d.wait_ready()
        d.wait_indexed()
        yield d
    finally:
        d.stop()
    assert "Traceback" not in d.log.read_text()


@contextlib.asynccontextmanager
async def session(
    d: Daemon, query: str = "", token: str | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized SDK session over Streamable HTTP to the daemon's /mcp."""
    headers = {"Authorization": f"Bearer {token or d.info['token']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(d.info["url"] + "/mcp" + query, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as s,
    ):
        await s.initialize()
        yield s


async def call(s: ClientSession, name: str, **args: Any) -> Any:
    """A successful tool call's JSON."""
    result = await s.call_tool(name, args)
    text = "".join(c.text for c in result.content if c.type == "text")
    assert not result.is_error, f"{name}: {text}"
    return json.loads(text)


async def test_an_agent_lists_and_searches_with_the_token(daemon: Daemon) -> None:
    async with session(daemon) as s:
        assert [t.name for t in (await s.list_tools()).tools] == list(LEAN)
        found = await call(s, "query", q="tiers", mode="keyword")
        assert found["results"][0]["title"] == "Pricing"
    async with session(daemon, "?tools=all&agent=claude-code") as s:
        assert [t.name for t in (await s.list_tools()).tools] == [t.name for t in TOOLS]
        status = await call(s, "status")
        assert status["servedBy"] == {
            "daemon": True,
            "pid": daemon.proc.pid,
            "port": daemon.info["port"],
        }
        stored = (await call(s, "memory_store_fact", text="We chose Stripe"))["stored"]
        assert stored["createdBy"] == "claude-code" and stored["source"] == "mcp"
        refused = await s.call_tool("graph_backlinks", {"note": "Pricing", "collection": "other"})
        assert refused.is_error and "acts on the collection" in refused.content[0].text  # type: ignore[union-attr]


async def test_without_the_token_or_from_elsewhere_it_is_refused(daemon: Daemon) -> None:
    url = daemon.info["url"] + "/mcp"
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(timeout=30) as http:
        no_token = await http.post(url, json=hello, headers=accept)
        assert no_token.status_code == 401 and no_token.headers["WWW-Authenticate"]
        assert no_token.json()["error"]["code"] == "unauthorized"
        auth = {**accept, "Authorization": f"Bearer {daemon.info['token']}"}
        wrong = await http.post(url, json=hello, headers={**auth, "Host": "evil.example"})
        assert wrong.status_code == 403
        other = await http.post(url, json=hello, headers={**auth, "Origin": "https://evil.example"})
        assert other.status_code == 403
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own groups
        async with session(daemon, token="wrong"):
            pass


async def test_a_client_that_hangs_up_mid_call_leaves_nothing_half_written(
    daemon: Daemon,
) -> None:
    count = 16
    answered: list[int] = []

    async def create(s: ClientSession, i: int, done: anyio.Event) -> None:
        await call(s, "note_create", path=f"Tasting/{i:02d}.md", body=BODY)
        answered.append(i)
        done.set()

    with contextlib.suppress(Exception):  # the client's own streams fail as it hangs up
        async with session(daemon, "?tools=all") as s:
            done = anyio.Event()
            async with anyio.create_task_group() as tg:
                for i in range(count):
                    tg.start_soon(create, s, i, done)
                await done.wait()  # the first answer: the others are queued or running
                tg.cancel_scope.cancel()
    assert 1 <= len(answered) < count
    async with session(daemon, "?tools=all") as s:  # a write behind whatever was still going
        await call(s, "note_create", path="Tasting/last.md", body="# Last\n")
        written = sorted((daemon.vault / "Tasting").glob("*.md"))
        assert len(written) >= len(answered) + 1
        for path in written:
            text = path.read_text()
            assert text in (BODY, "# Last\n"), f"{path.name} is half-written"
            page = await s.call_tool("get", {"ref": f"Tasting/{path.name}", "lines": 1})
            assert not page.is_error, f"{path.name} is written but not indexed"
        assert not [p for p in daemon.vault.rglob("*") if p.name.endswith(".tmp")]
        assert (await call(s, "query", q="tiers", mode="keyword"))["results"]
