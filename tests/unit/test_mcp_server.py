"""The MCP server's pure parts: bounded output, argument checking, the tool schemas, and where
a call runs (daemon, fallback, in-process) with a fake daemon beside the real one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from engram import codec
from engram.config import Settings, Vault
from engram.errors import InvalidInputError
from engram.index.languages import LanguageReport
from engram.mcp_server.app import call
from engram.mcp_server.gateway import Gateway, Options, Worker
from engram.mcp_server.output import (
    clip_text,
    fit_json,
    render_document,
    render_documents,
)
from engram.mcp_server.profiles import TOOLS, select
from engram.service import requests as rq
from engram.service.daemon import DaemonEngram, DaemonUnreachable
from engram.service.deep import DeepSearchResult
from engram.service.semantic import EmbeddingState
from engram.service.upkeep import IndexFile, Status, VectorSearch


def results(n: int, snippet: str = "a short snippet") -> dict[str, Any]:
    return {"results": [{"title": f"note {i}", "snippet": snippet} for i in range(n)]}


def test_output_that_fits_is_plain_json_without_nulls() -> None:
    out = fit_json({"results": [{"a": 1, "b": None}], "n": None}, 1000)
    assert json.loads(out) == {"results": [{"a": 1}]}


@pytest.mark.parametrize("budget", [1000, 2000, 5000])
def test_long_lists_lose_items_from_the_end_and_say_so(budget: int) -> None:
    out = fit_json(results(200), budget, "Ask for fewer.")
    data = json.loads(out)
    assert len(out) <= budget
    kept = len(data["results"])
    assert 0 < kept < 200 and data["results"][-1]["title"] == f"note {kept - 1}"
    assert data["truncated"].startswith(f"showing {kept} of 200 results")
    assert data["truncated"].endswith("Ask for fewer.")


def test_long_texts_are_shortened_before_items_are_dropped() -> None:
    data = json.loads(fit_json(results(3, "x" * 5000), 4000))
    assert len(data["results"]) == 3
    assert all(len(r["snippet"]) < 1300 for r in data["results"])
    assert "long texts cut to" in data["truncated"]


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=3000),
        lambda inner: st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=80,
    ),
    st.integers(min_value=1000, max_value=6000),
)
def test_no_payload_ever_exceeds_the_budget(value: Any, budget: int) -> None:
    out = fit_json({"value": value, "items": [value, value]}, budget)
    assert len(out) <= budget
    if not out.endswith("characters]"):  # not the last-resort cut: still JSON
        json.loads(out)


def test_clip_text_cuts_at_a_line_end_and_notes_it() -> None:
    text = "\n".join(f"line {i} " + "y" * 40 for i in range(100))
    out = clip_text(text, 500, "ask for less")
    assert len(out) <= 500 and "[truncated at 500 characters; ask for less]" in out
    assert out.split("\n…")[0].endswith("y")  # whole lines only
    assert clip_text("short", 500) == "short"


def doc(lines: int, start: int = 1, **extra: Any) -> dict[str, Any]:
    text = "\n".join(f"line {i}" for i in range(start, lines + 1))
    return {
        "docid": "abc123",
        "uri": "engram://notes/a.md",
        "path": "a.md",
        "title": "A",
        "fromLine": start,
        "totalLines": lines,
        "text": text,
        **extra,
    }


def test_a_cut_document_names_the_line_to_read_on_from() -> None:
    out = render_document(doc(1000), 2000)
    assert len(out) <= 2000 and out.startswith("# A\nengram://notes/a.md  (#abc123, lines 1-1000")
    nxt = int(out.rsplit("from=", 1)[1].split()[0])
    assert f"line {nxt - 1}\n" in out and f"line {nxt}\n" not in out
    rest = render_document(doc(1000, start=nxt), 2000)
    assert f"\nline {nxt}\n" in rest


def test_a_whole_document_and_an_empty_range() -> None:
    out = render_document(doc(3, context="team notes"), 2000)
    assert out == (
        "# A\nengram://notes/a.md  (#abc123, lines 1-3 of 3)\ncontext: team notes\n\n"
        "line 1\nline 2\nline 3"
    )
    past = render_document({**doc(3), "fromLine": 9, "text": ""}, 2000)
    assert "no lines of 3" in past


def test_documents_that_do_not_fit_are_named() -> None:
    docs = [doc(200, uri=f"engram://notes/{i}.md") for i in range(10)]
    docs = [{**d, "uri": f"engram://notes/{i}.md"} for i, d in enumerate(docs)]
    out = render_documents(docs, 3000)
    assert len(out) <= 3000
    assert "more documents not shown" in out and "engram://notes/9.md" in out


TOOL = {t.name: t for t in TOOLS}


def test_every_tool_schema_is_valid_and_described() -> None:
    assert len(TOOL) == len(TOOLS)
    assert set(TOOL) == {
        *("search", "vsearch", "query", "get", "multi_get", "status", "active_note", "tags"),
        *("memory_store_fact", "memory_recall", "memory_get_context", "memory_checkpoint"),
        *("memory_wake", "memory_end_session", "memory_deep_search", "memory_log"),
        *("graph_backlinks", "graph_neighbors", "graph_path", "graph_rank", "graph_themes"),
        *("note_create", "note_edit", "note_move", "note_delete", "note_link"),
    }
    for tool in TOOLS:
        Draft202012Validator.check_schema(dict(tool.schema))
        assert len(tool.description) > 80, tool.name
        assert all(p.get("description") for p in tool.schema["properties"].values()), tool.name


def test_the_lean_set_offers_its_tools_with_their_everyday_arguments() -> None:
    lean = {t.name: t for t in select("lean")}
    assert len(lean) <= 8 and {"query", "get", "memory_recall", "note_edit"} <= set(lean)
    assert set(lean["query"].schema["properties"]) == {"q", "n", "mode", "maxChars"}
    request, _ = lean["query"].decode({"q": "x"})
    assert request == rq.Query("x")  # what is not offered keeps its default
    with pytest.raises(InvalidInputError, match="unknown argument 'expand'"):
        lean["query"].decode({"q": "x", "expand": False})
    assert [t.name for t in select("get, tags,get")] == ["get", "tags"]
    with pytest.raises(InvalidInputError, match="no tool named 'nope'"):
        select("get,nope")


def test_writing_tools_say_so_in_their_hints() -> None:
    from engram.mcp_server.app import listed

    hints = {t.name: listed(t).annotations for t in TOOLS}
    for name in ("note_create", "note_edit", "note_move", "note_delete", "note_link"):
        assert hints[name] is not None and hints[name].read_only_hint is False, name
    assert {n for n, h in hints.items() if h and h.destructive_hint} == {
        "note_edit",
        "note_move",
        "note_delete",
    }
    for tool in TOOLS:  # a read-only tool cannot claim to destroy anything
        assert not (tool.read_only and (tool.destructive or tool.idempotent)), tool.name


def test_schemas_are_the_request_types_with_the_http_wire_names() -> None:
    """A tool over a routed operation takes its request type's fields (less those the server
    fills in) under the same names and bounds as the HTTP API, plus its own extras."""
    for tool in TOOLS:
        if tool.args.__module__ != rq.__name__:
            continue
        wire = {f.wire: f for f in codec.fields_of(tool.args)}
        props = tool.schema["properties"]
        assert set(wire) - set(tool.omit) <= set(props), tool.name
        for name, f in wire.items():
            if name in props and f.meta.get("high") is not None:
                assert (
                    props[name].get("maximum", props[name].get("anyOf", [{}])[0].get("maximum"))
                    == f.meta["high"]
                ), (tool.name, name)
    assert set(TOOL["memory_recall"].schema["properties"]) >= {"q", "n", "type", "includeNotes"}
    assert "createdBy" not in TOOL["memory_store_fact"].schema["properties"]


def test_arguments_get_their_defaults() -> None:
    search, extra = TOOL["search"].decode({"q": "x"})
    assert search == rq.Search("x") and extra.max_chars == 20_000
    assert TOOL["query"].decode({"q": "x"})[1].mode == "hybrid"
    recall, _ = TOOL["memory_recall"].decode({"q": "x", "type": "decision"})
    assert recall == rq.Recall("x", fact_type="decision")


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("search", {}, "'q' is required"),
        ("search", {"q": "x", "n": 1001}, "n must be from 1 to 1000, got 1001"),
        ("search", {"q": "x", "qurey": 1}, "unknown argument 'qurey'"),
        ("search", {"q": " "}, "q must not be empty"),
        ("query", {"q": "x", "mode": "fast"}, "mode must be one of hybrid, keyword, semantic"),
        ("get", {"ref": ["a"]}, "ref must be a string"),
        ("multi_get", {"paths": "a"}, "paths must be a list"),
        ("memory_store_fact", {"text": "x", "tags": "a"}, "tags must be a list"),
        ("memory_store_fact", {"text": "x", "createdBy": "me"}, "unknown argument 'createdBy'"),
        ("search", {"q": "x", "filters": {"path": 3}}, "filters.path must be a list"),
        ("search", {"q": "x", "minScore": float("nan")}, "NaN and Infinity are not numbers"),
        ("graph_neighbors", {"path": "a", "edgeTypes": ["x"]}, "edgeTypes[0] must be one of"),
    ],
)
def test_bad_arguments_say_what_is_wrong_and_what_is_taken(
    tool: str, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        TOOL[tool].decode(args)
    assert message in caught.value.message
    assert caught.value.hint and caught.value.hint.startswith(f"{tool} takes ")


class FakeDaemon:
    """Answers like the daemon's HTTP API, or has just died (DaemonClient's interface)."""

    pid, port = 42, 1234

    def __init__(self, collection: str, dead: bool = False) -> None:
        self.collection = collection
        self.dead = dead
        self.calls: list[str] = []

    def request(
        self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        if path == "/v1/status":
            self.calls.append("status")
            if self.dead:
                raise DaemonUnreachable("gone", sent=False)
            return {"documents": 7}
        assert path == "/v1/memory/deep-search"
        self.calls.append("deep")
        return {"query": body["q"], "sources": ["local"], "notes": [], "results": []}


SETTINGS = Settings(
    "index",
    Path("/nonexistent/data"),
    Path("/nonexistent/cache"),
    Path("/nonexistent/config"),
    Path("/nonexistent/config/index.yml"),
    vaults=(Vault("notes"),),
    default_vault="notes",
)


def gateway(engram: Any, daemon: FakeDaemon | None, use_daemon: bool = True) -> Gateway:
    """A gateway over the daemon-backed Engram the composition root makes."""
    found = daemon if use_daemon else None
    return Gateway(
        Worker(lambda: DaemonEngram(lambda: found, SETTINGS, engram)),  # type: ignore[arg-type,return-value]
        Options(use_daemon=use_daemon, tools="all"),
    )


class FakeEngram:
    """Just enough facade for routing: the vault name, a status, a deep search."""

    def vault_name(self, vault: str | None) -> str:
        return "notes"

    def status(self) -> Status:
        return Status(
            "0",
            IndexFile("index", "index.sqlite", 0, None, 0),
            "config.yml",
            (),
            documents=3,
            links=0,
            tags=0,
            contents=3,
            warnings=0,
            vector_search=VectorSearch(False, None),
            embeddings=EmbeddingState(None, None, None, 0, 0, 0, 0, 0),
            models={},
            query_stages={},
            languages=LanguageReport({}, 0, 0, 0, 0.0, None),
        )

    def deep_search(self, query: str, n: int, vault: str | None) -> DeepSearchResult:
        return DeepSearchResult(query, ("local",), (), ("in-process",))

    def close(self) -> None:
        pass


class BrokenEngram(FakeEngram):
    """A facade with a bug."""

    def status(self) -> Status:
        raise ValueError("boom")


def text(result: Any) -> str:
    return "".join(c.text for c in result.content)


async def test_calls_go_to_a_live_daemon_and_fall_back_when_it_dies() -> None:
    daemon = FakeDaemon("notes")
    gw = gateway(FakeEngram, daemon)
    assert json.loads(text(await call(gw, "status", {})))["documents"] == 7
    daemon.dead = True
    data = json.loads(text(await call(gw, "status", {})))
    assert data["documents"] == 3 and data["servedBy"] == {"daemon": False}
    assert "in-process" not in text(await call(gw, "memory_deep_search", {"q": "x"}))
    assert daemon.calls == ["status", "status", "deep"]


async def test_memory_calls_stay_local_when_the_daemon_serves_another_vault() -> None:
    daemon = FakeDaemon("elsewhere")
    gw = gateway(FakeEngram, daemon)
    assert "in-process" in text(await call(gw, "memory_deep_search", {"q": "x"}))
    assert daemon.calls == []
    off = gateway(FakeEngram, daemon, use_daemon=False)
    assert json.loads(text(await call(off, "status", {})))["servedBy"] == {"daemon": False}


async def test_a_bug_is_an_error_result_not_a_dead_server() -> None:
    gw = gateway(BrokenEngram, None)
    out = await call(gw, "status", {})
    assert out.is_error and text(out).startswith("internal error in status: ValueError: boom")
    out = await call(gw, "memory_deep_search", {"q": "x"})
    assert not out.is_error and "in-process" in text(out)
