"""`engram mcp` as an agent's context window sees it, through the official SDK on stdio: the
lean default tool set (at most 8 tools, 10,000 characters of tools/list), the full set on
request, and results shaped for a context window (lists in pages with a total and a cursor,
each diff once, memory context that says each fact once)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from engram import config
from engram.mcp_server.profiles import LEAN, MAX_LEAN_CHARS, MAX_LEAN_TOOLS, TOOLS
from engram.service import Engram
from tests.integration.server.server_helpers import NO_KEYRING

pytestmark = pytest.mark.slow  # a real `engram mcp` process on stdio
ROOT = Path(__file__).resolve().parents[2]
LINKING = 45  # notes linking to the hub


@pytest.fixture
def vault(xdg: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vault with a hub note that 45 notes link to (some twice on one line), tagged notes,
    as the default vault of an isolated environment the server inherits."""
    for key, value in {
        **NO_KEYRING,
        "ENGRAM_AGENT_ID": "test-agent",
        "PYTHONPATH": str(ROOT / "backend"),
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("ENGRAM_MCP_TOOLS", raising=False)
    root = tmp_path / "Vault"
    (root / "notes").mkdir(parents=True)
    (root / "Hub.md").write_text("# Hub\n\nWhere everything meets. #topic/hub\n")
    for i in range(LINKING):
        twice = " and [[Hub|again]]" if i % 3 == 0 else ""
        body = f"# Note {i:02d}\n\nSee [[Hub]]{twice} for the overview.\n\n#topic/n{i:02d}\n"
        (root / "notes" / f"Note {i:02d}.md").write_text(body)
    with Engram(config.resolve(os.environ)) as e:
        e.init_vault(str(root))
    return root


@contextlib.asynccontextmanager
async def session(log: Path, *args: str) -> AsyncIterator[ClientSession]:
    """An initialized client session with a fresh `engram mcp` subprocess."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp", *args], env=dict(os.environ)
    )
    with log.open("a") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write, read_timeout_seconds=120) as s,
        ):
            await s.initialize()
            yield s


async def call(s: ClientSession, name: str, **args: Any) -> Any:
    """A successful tool call's JSON."""
    result = await s.call_tool(name, args)
    text = "".join(c.text for c in result.content if c.type == "text")
    assert not result.is_error, f"{name}: {text}"
    return json.loads(text)


async def fails(s: ClientSession, name: str, **args: Any) -> str:
    """A failed tool call's message."""
    result = await s.call_tool(name, args)
    text = "".join(c.text for c in result.content if c.type == "text")
    assert result.is_error, f"{name} should have failed: {text}"
    return text


async def test_the_default_tool_set_is_lean(vault: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp"], env=dict(os.environ)
    )
    with (tmp_path / "mcp.log").open("a") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write, read_timeout_seconds=120) as s,
        ):
            hello = await s.initialize()
            listed = await s.list_tools()
            assert "--tools all" in (hello.instructions or "")
            characters = len(listed.model_dump_json(by_alias=True, exclude_none=True))
            assert len(listed.tools) <= MAX_LEAN_TOOLS and characters <= MAX_LEAN_CHARS
            assert [t.name for t in listed.tools] == list(LEAN)
            for tool in listed.tools:
                assert set(tool.input_schema["properties"]) == set(LEAN[tool.name]), tool.name
            with pytest.raises(MCPError, match=r"graph_backlinks is in the full set"):
                await s.call_tool("graph_backlinks", {"note": "Hub"})
            hidden = await fails(s, "query", q="overview", expand=False)
            assert "unknown argument 'expand'" in hidden
            found = await call(s, "query", q="overview", mode="keyword", n=3)
            assert len(found["results"]) == 3


async def test_every_tool_with_tools_all_and_a_chosen_few_by_name(
    vault: Path, tmp_path: Path
) -> None:
    async with session(tmp_path / "mcp.log", "--tools", "all") as s:
        listed = (await s.list_tools()).tools
        assert [t.name for t in listed] == [t.name for t in TOOLS]
        query = next(t for t in listed if t.name == "query")
        assert {"expand", "rerank", "filters", "candidateLimit"} <= set(
            query.input_schema["properties"]
        )
    async with session(tmp_path / "mcp.log", "--tools", "get,graph_backlinks") as s:
        assert [t.name for t in (await s.list_tools()).tools] == ["get", "graph_backlinks"]


async def test_long_lists_come_in_pages_with_a_total_and_a_cursor(
    vault: Path, tmp_path: Path
) -> None:
    async with session(tmp_path / "mcp.log", "--tools", "all") as s:
        first = await call(s, "graph_backlinks", note="Hub")
        assert first["total"] == LINKING and len(first["from"]) == 20
        assert first["nextCursor"] == "20" and first["links"] == LINKING + LINKING // 3
        twice = next(n for n in first["from"] if n["path"] == "notes/Note 00.md")
        assert len(twice["lines"]) == 1  # two links on one line: the line once
        seen = [n["path"] for n in first["from"]]
        page = first
        while "nextCursor" in page:
            page = await call(s, "graph_backlinks", note="Hub", cursor=page["nextCursor"])
            seen += [n["path"] for n in page["from"]]
        assert len(seen) == len(set(seen)) == LINKING
        small = await call(s, "graph_backlinks", note="Hub", limit=100, maxChars=1000)
        kept = len(small["from"])
        assert 1 <= kept < LINKING and small["nextCursor"] == str(kept)
        assert len(json.dumps(small, ensure_ascii=False, separators=(",", ":"))) <= 1000
        assert "not one this tool gave" in await fails(s, "graph_backlinks", note="Hub", cursor="x")
        tags = await call(s, "tags", limit=10)
        assert tags["total"] == LINKING + 2 and len(tags["tags"]) == 10 and tags["nextCursor"]
        assert tags["tags"][0] == ["topic", LINKING + 1]


async def test_a_note_edit_shows_its_diff_once(vault: Path, tmp_path: Path) -> None:
    async with session(tmp_path / "mcp.log") as s:
        edited = await call(s, "note_edit", path="Hub", append="A new line.")
        assert "diff" not in edited and "message" not in edited
        assert [f["action"] for f in edited["files"]] == ["modify"]
        assert edited["files"][0]["diff"].count("+A new line.") == 1


async def test_memory_context_says_each_fact_once(vault: Path, tmp_path: Path) -> None:
    async with session(tmp_path / "mcp.log") as s:
        for text in ("We chose Stripe for payments", "We ship roasts on Mondays"):
            await call(s, "memory_store_fact", text=text, type="decision", importance=0.9)
        result = await s.call_tool("memory_get_context", {"q": "payments", "budget": 600})
        context = "".join(c.text for c in result.content if c.type == "text")
    assert "/600 tokens" in context
    assert context.count("We chose Stripe for payments") == 1
    assert context.count("We ship roasts on Mondays") == 1
