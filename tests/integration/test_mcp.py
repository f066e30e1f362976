"""`engram mcp` driven by the official MCP client over stdio: every tool with valid arguments
(real content back), invalid calls (MCP errors, the server lives on), and the warm daemon."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from engram import config
from engram.service import Engram
from tests.integration.server.server_helpers import NO_KEYRING, Daemon

pytestmark = pytest.mark.slow  # a real `engram mcp` process on stdio
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "fixtures" / "vaults" / "example"
TOOLS = {
    "search",
    "vsearch",
    "query",
    "get",
    "multi_get",
    "status",
    "active_note",
    "tags",
    "memory_store_fact",
    "memory_recall",
    "memory_get_context",
    "memory_checkpoint",
    "memory_wake",
    "memory_end_session",
    "memory_deep_search",
    "memory_log",
    "graph_backlinks",
    "graph_neighbors",
    "graph_path",
    "graph_rank",
    "graph_themes",
    "note_create",
    "note_edit",
    "note_move",
    "note_delete",
    "note_link",
}

# Every tool that writes, with its (destructiveHint, idempotentHint); the rest are read-only.
WRITERS = {
    "memory_store_fact": (False, False),
    "memory_checkpoint": (False, False),
    "memory_end_session": (False, False),
    "memory_log": (False, False),
    "note_create": (False, True),
    "note_edit": (True, False),
    "note_move": (True, False),
    "note_delete": (True, False),
    "note_link": (False, True),
}


@pytest.fixture
def vault(xdg: dict[str, str], tiny: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example vault as the default vault, indexed and embedded with a tiny real GGUF
    embedder; the environment (inherited by the server) isolated and pointing at this tree,
    every tool listed."""
    for key, value in {
        **NO_KEYRING,
        "ENGRAM_EMBED_MODEL": str(tiny.embed),
        "ENGRAM_AGENT_ID": "test-agent",
        "ENGRAM_MCP_TOOLS": "all",  # every tool; the lean default: test_mcp_profiles.py
        "PYTHONPATH": str(ROOT / "backend"),
        "NO_COLOR": "1",
    }.items():
        monkeypatch.setenv(key, value)
    root = Path(shutil.copytree(EXAMPLE, tmp_path / "Brewline"))
    with Engram(config.resolve(os.environ)) as e:
        e.init_vault(str(root))
        e.embed()
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


async def call(s: ClientSession, name: str, **args: Any) -> str:
    """A successful tool call's text."""
    result = await s.call_tool(name, args)
    text = "".join(c.text for c in result.content if c.type == "text")
    assert not result.is_error, f"{name}: {text}"
    return text


async def fails(s: ClientSession, name: str, **args: Any) -> str:
    """A failed tool call's message."""
    result = await s.call_tool(name, args)
    text = "".join(c.text for c in result.content if c.type == "text")
    assert result.is_error, f"{name} should have failed: {text}"
    return text


async def test_tools_are_listed_with_schemas_written_for_agents(
    vault: Path, tmp_path: Path
) -> None:
    async with session(tmp_path / "mcp.log", "--index", "index", "--vault", str(vault)) as s:
        listed = (await s.list_tools()).tools
        status = json.loads(await call(s, "status"))
    assert {t.name for t in listed} == TOOLS
    for tool in listed:
        assert tool.description and len(tool.description) > 80, tool.name
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name}"
        assert tool.annotations is not None
    hints = {
        t.name: (t.annotations.destructive_hint, t.annotations.idempotent_hint)
        for t in listed
        if not t.annotations.read_only_hint
    }
    assert hints == WRITERS  # (destructive, idempotent) of every tool that writes
    for t in listed:
        if t.annotations.read_only_hint:
            assert t.annotations.destructive_hint is False, t.name
    assert status["mcp"] == {"vault": "Brewline", "agent": "test-agent"}
    assert status["servedBy"] == {"daemon": False}
    assert status["collections"][0]["documents"] >= 10
    assert "Traceback" not in (tmp_path / "mcp.log").read_text()


async def test_every_tool_returns_real_content(vault: Path, tmp_path: Path) -> None:
    async with session(tmp_path / "mcp.log") as s:
        found = json.loads(await call(s, "search", q="tiered pricing"))
        assert found["results"][0]["title"] == "Pricing Model"
        assert found["results"][0]["uri"] == "engram://Brewline/Projects/Pricing Model.md"
        near = json.loads(await call(s, "vsearch", q="coffee subscription plans", n=3))
        assert 1 <= len(near["results"]) <= 3 and all(r["docid"] for r in near["results"])
        hybrid = json.loads(await call(s, "query", q="pricing tiers", n=5))
        assert "Pricing Model" in [r["title"] for r in hybrid["results"]]
        people = json.loads(
            await call(s, "query", q="design growth", mode="keyword", filters={"tags": ["person"]})
        )
        assert {r["title"] for r in people["results"]} == {"Ana Ruiz", "Kenji Sato"}

        page = await call(s, "get", ref="Projects/Pricing Model.md", lines=10)
        assert page.startswith("# Pricing Model\nengram://Brewline/Projects/Pricing Model.md")
        assert "lines 1-10 of 35)" in page and "We compared flat monthly pricing" in page
        both = await call(s, "multi_get", paths=["People/*.md"])
        assert "# Ana Ruiz" in both and "# Kenji Sato" in both
        listed = json.loads(await call(s, "tags", sort="count"))
        assert ["person", 2] in listed["tags"] and listed["total"] == len(listed["tags"])

        stored = json.loads(
            await call(
                s,
                "memory_store_fact",
                text="We chose Stripe as the payment provider for subscriptions",
                type="decision",
                tags=["payments"],
            )
        )["stored"]
        assert stored["factType"] == "decision" and stored["createdBy"] == "test-agent"
        assert stored["source"] == "mcp" and (vault / stored["path"]).is_file()
        recalled = json.loads(await call(s, "memory_recall", q="payment provider Stripe"))
        assert recalled["results"][0]["fact"]["id"] == stored["id"]
        asked = json.loads(await call(s, "memory_recall", q="what did we decide today"))
        assert asked["results"][0]["fact"]["id"] == stored["id"]
        assert (
            asked["read"]["window"]["phrases"] == ["today"] and asked["read"]["type"] == "decision"
        )
        context = await call(s, "memory_get_context", q="payments", budget=500)
        assert context.startswith("[memory context: profile default, ")
        assert "/500 tokens" in context and "Stripe" in context
        deep = json.loads(await call(s, "memory_deep_search", q="Stripe"))
        assert deep["sources"] == ["local"]
        assert deep["notes"] == ["local only: sync is not configured"]
        assert stored["id"] in [r["hit"].get("fact", {}).get("id") for r in deep["results"]]

        logged = json.loads(
            await call(s, "memory_log", messages=[{"role": "user", "text": "We chose oat milk"}])
        )
        raw = vault / logged["lines"][0]["path"]
        assert logged["agent"] == "test-agent" and logged["appended"] == 1
        assert json.loads(raw.read_text().splitlines()[-1])["text"] == "We chose oat milk"
        assert "line 1" in await fails(
            s, "memory_log", messages=[{"role": "u", "text": "x", "ts": "no"}]
        )

        saved = json.loads(
            await call(s, "memory_checkpoint", workingOn="billing page", focus="webhooks")
        )
        assert saved["checkpoint"]["workingOn"] == "billing page"
        woke = json.loads(await call(s, "memory_wake"))
        assert woke["dirtyExit"] is True and woke["checkpoint"]["focus"] == "webhooks"
        assert any("Stripe" in r["text"] for r in woke["recent"])
        ended = json.loads(
            await call(s, "memory_end_session", summary="Billing page done; next: invoices")
        )
        assert ended["wasDirty"] is True and ended["handoff"]["factType"] == "session_summary"
        again = json.loads(await call(s, "memory_wake"))
        assert again["dirtyExit"] is False
        assert [h["title"] for h in again["handoffs"]] == ["Billing page done; next: invoices"]

        back = json.loads(await call(s, "graph_backlinks", note="Ana Ruiz"))
        assert "Home.md" in {note["path"] for note in back["from"]}
        assert back["total"] == len(back["from"]) and back["from"][0]["lines"][0][0] >= 1
        around = json.loads(await call(s, "graph_neighbors", path="Home", depth=1))
        assert "Projects/Pricing Model.md" in {n["path"] for n in around["neighbors"]}
        tagged = json.loads(
            await call(s, "graph_neighbors", path="Ana Ruiz", depth=2, edgeTypes=["tag"])
        )
        assert {n["id"] for n in tagged["neighbors"]} >= {"tag:person", "note:People/Kenji Sato.md"}
        chain = json.loads(await call(s, "graph_path", source="Ana Ruiz", target="Kenji Sato"))
        assert chain["found"] is True and chain["length"] >= 1
        ranked = json.loads(await call(s, "graph_rank", about="pricing", n=5))
        assert ranked["method"].startswith("PageRank among the") and 1 <= len(ranked["notes"]) <= 5
        assert all(n["relevance"] > 0 for n in ranked["notes"])  # says why each note is there
        themes = json.loads(await call(s, "graph_themes"))
        assert themes["themes"] and themes["themes"][0]["notes"]
        assert "no Obsidian is connected" in await call(s, "active_note")

        made = json.loads(
            await call(
                s,
                "note_create",
                path="Ideas/Tasting Box.md",
                body="# Tasting Box\n\nA flight of three roasts.\n",
            )
        )
        assert (vault / "Ideas" / "Tasting Box.md").is_file() and made["changed"]
        preview = json.loads(
            await call(
                s, "note_edit", path="Ideas/Tasting Box.md", append="Price: 19 EUR.", dryRun=True
            )
        )
        assert "+Price: 19 EUR." in preview["files"][0]["diff"] and "diff" not in preview
        assert "19 EUR" not in (vault / "Ideas" / "Tasting Box.md").read_text()
        edited = json.loads(
            await call(
                s,
                "note_edit",
                path="Ideas/Tasting Box.md",
                append="Price: 19 EUR.",
                expectedHash=made["hash"],
            )
        )
        stale = await fails(
            s, "note_edit", path="Ideas/Tasting Box.md", append="x", expectedHash=made["hash"]
        )
        assert "changed since" in stale
        linked = json.loads(
            await call(s, "note_link", path="Home.md", target="Ideas/Tasting Box.md")
        )
        assert "[[Tasting Box]]" in (vault / "Home.md").read_text() and linked["changed"]
        moved = json.loads(
            await call(
                s,
                "note_move",
                path="Ideas/Tasting Box.md",
                to="Projects/Tasting Box.md",
                expectedHash=edited["hash"],
            )
        )
        assert (vault / "Projects" / "Tasting Box.md").is_file() and moved["changed"]
        gone = json.loads(await call(s, "note_delete", path="Projects/Tasting Box.md"))
        assert (vault / ".trash" / "Projects" / "Tasting Box.md").is_file() and gone["changed"]

        small = json.loads(await call(s, "search", q="pricing", full=True, maxChars=1000))
        assert "maxChars" in small["truncated"] and len(json.dumps(small)) < 1200


async def test_invalid_calls_are_errors_and_the_server_lives_on(
    vault: Path, tmp_path: Path
) -> None:
    async with session(tmp_path / "mcp.log") as s:
        assert "'q' is required" in await fails(s, "search")
        low = await fails(s, "search", q="x", n=0)
        assert "n must be from 1 to 1000, got 0" in low and "search takes q (string" in low
        assert "unknown argument 'qurey'" in await fails(s, "search", q="x", qurey="y")
        assert "no collection named 'nope'" in await fails(s, "search", q="x", collections=["nope"])
        assert "ref must be a string" in await fails(s, "get", ref=5)
        assert (await fails(s, "get", ref="Nope.md")).startswith("not_found:")
        assert "empty" in await fails(s, "memory_store_fact", text="   ")
        assert "importance" in await fails(s, "memory_store_fact", text="x", importance=2)
        assert "nonsense" in await fails(s, "memory_store_fact", text="x", type="nonsense")
        party = await fails(s, "memory_get_context", profile="party")
        assert "profile must be one of default, planning" in party
        assert "not_found" in await fails(s, "graph_neighbors", path="Nobody At All Here")
        assert "'target' is required" in await fails(s, "graph_path", source="Home")
        colour = await fails(s, "search", q="x", filters={"colour": "red"})
        assert "filters: unknown field 'colour'" in colour
        with pytest.raises(MCPError, match="unknown tool 'rm_rf'"):
            await s.call_tool("rm_rf", {})
        await call(s, "note_create", path="Big.md", body="x" * 100_000)
        huge = await fails(
            s, "note_edit", path="Big.md", find="x", replace="y" * 100_000, dryRun=True
        )  # 10 GB if built: refused before it is
        assert "max_file_bytes" in huge and len(huge) < 1000
        odd = await s.call_tool("search", {"q": 'a\x00b "unclosed -'})
        assert odd.content  # answered (a result or an error), not a dead server
        alive = json.loads(await call(s, "search", q="roasting partners"))
        assert alive["results"]
    log = (tmp_path / "mcp.log").read_text()
    assert "Traceback" not in log


def logged(d: Daemon, route: str) -> int:
    return d.log.read_text().count(route)


async def logs_more(d: Daemon, route: str, before: int) -> bool:
    """Whether the daemon logged `route` again (aiohttp writes the access line just after the
    reply, so give it a moment)."""
    for _ in range(100):
        if logged(d, route) > before:
            return True
        await anyio.sleep(0.05)
    return False


async def test_a_running_daemon_answers_for_the_mcp_server(vault: Path, tmp_path: Path) -> None:
    d = Daemon({}, vault, tmp_path / "serve.log", "--no-watch")
    try:
        d.wait_ready()
        async with session(tmp_path / "mcp.log") as s:
            silent = await call(s, "active_note")  # a daemon, but no plugin has reported
            assert silent.startswith("no Obsidian is connected: engram serve runs")
        d.call("POST", "/v1/active-note", {"path": "Home.md", "cursorLine": 3})
        async with session(tmp_path / "mcp.log") as s:
            status = json.loads(await call(s, "status"))
            assert status["servedBy"] == {"daemon": True, "pid": d.proc.pid, "port": d.info["port"]}
            cases = [
                ("POST /v1/search", "search", {"q": "tiered pricing"}),
                ("POST /v1/query", "query", {"q": "pricing tiers", "n": 3}),
                ("GET /v1/documents", "get", {"ref": "Home.md"}),
                ("POST /v1/recall", "memory_recall", {"q": "pricing"}),
                ("POST /v1/facts", "memory_store_fact", {"text": "Roasts ship on Mondays"}),
                ("POST /v1/memory/context", "memory_get_context", {"q": "roasts"}),
                ("POST /v1/memory/deep-search", "memory_deep_search", {"q": "Mondays"}),
                ("GET /v1/active-note", "active_note", {"includeText": True}),
            ]
            for route, tool, args in cases:
                before = logged(d, route)
                text = await call(s, tool, **args)
                assert await logs_more(d, route, before), f"{tool} did not use the daemon"
                assert text
            note = json.loads(await call(s, "active_note"))
            assert note["uri"] == "engram://Brewline/Home.md" and note["title"] == "Home"
            assert note["cursorLine"] == 3
            d.call("POST", "/v1/active-note", {"path": None})  # the plugin unloaded
            assert "no Obsidian is connected" in await call(s, "active_note")
            stored = json.loads(await call(s, "memory_recall", q="Mondays"))["results"][0]
            assert stored["fact"]["source"] == "mcp" and stored["fact"]["createdBy"] == "test-agent"

        async with session(tmp_path / "mcp.log", "--no-daemon") as s:
            before = logged(d, "POST /v1/search")
            assert json.loads(await call(s, "search", q="tiered pricing"))["results"]
            await anyio.sleep(0.5)  # a line it did write would be there by now
            assert logged(d, "POST /v1/search") == before
            assert "--no-daemon" in await call(s, "active_note")

        async with session(tmp_path / "mcp.log") as s:
            assert json.loads(await call(s, "status"))["servedBy"]["daemon"] is True
            assert d.stop() == 0
            after = json.loads(await call(s, "status"))  # the daemon is gone: in-process
            assert after["servedBy"] == {"daemon": False}
            assert json.loads(await call(s, "search", q="tiered pricing"))["results"]
    finally:
        d.stop()
    assert "Traceback" not in (tmp_path / "mcp.log").read_text()
