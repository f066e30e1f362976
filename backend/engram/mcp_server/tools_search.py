"""Search and read tools: search, vsearch, query, get, multi_get, status, active_note."""

from __future__ import annotations

from typing import Any

from engram import codec
from engram.mcp_server import schema as s
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import fit_json, render_document, render_documents
from engram.mcp_server.schema import Tool
from engram.service import wire

MODES = {"hybrid": "query", "keyword": "search", "semantic": "vsearch"}
NO_MATCH = "no matches: try other words, the query tool (hybrid), or fewer filters"
SYNTAX = (
    'Syntax: words rank by relevance; "exact phrase" is required; -word excludes; word* is a '
    "prefix; filters inside the text: path:folder/ tag:name collection:name after:2024-01-01 "
    "before:2024-06 key:value (a frontmatter property)."
)
RESULTS = (
    "Returns JSON {results: [{docid, uri, title, score 0..1, line, snippet, context}], notices}; "
    "read a whole note with get (uri or #docid)."
)

FILTERS = {
    "type": "object",
    "description": "Structured filters (the same as the inline syntax).",
    "properties": {
        "path": {
            "description": "Path prefix(es) inside the collection, e.g. projects/.",
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
        },
        "tags": s.texts("Notes carrying every one of these tags (nested tags match)."),
        "fields": {
            "type": "object",
            "description": "Frontmatter property values that must match, e.g. {status: done}.",
            "additionalProperties": {"type": ["string", "number"]},
        },
        "after": s.text("Notes dated on or after this date (2024, 2024-05 or 2024-05-07).", 32),
        "before": s.text("Notes dated before this date.", 32),
    },
    "additionalProperties": False,
}


def search_schema(extra: dict[str, Any]) -> dict[str, Any]:
    """The arguments every search mode shares, plus `extra`."""
    return s.obj(
        ["query"],
        query=s.text("What to look for. " + SYNTAX, 2000, 1),
        limit=s.integer("How many results.", 1, 100, 10),
        collections=s.texts("Only these collections (default: all).", 50, 200),
        min_score=s.number("Drop results scoring below this (0..1).", 0.0, 1.0, 0.0),
        filters=FILTERS,
        full=s.flag("Include each note's whole text instead of a snippet (costly; prefer get)."),
        **extra,
        max_chars=s.max_chars(),
    )


def compact(result: dict[str, Any]) -> dict[str, Any]:
    """A search result without what an agent cannot use (offsets, empty fields)."""
    skip = {"highlights", "collection", "path"}
    return {k: v for k, v in result.items() if k not in skip and v not in (None, "", [], {})}


async def run_search(gw: Gateway, a: dict[str, Any], mode: str) -> str:
    """One search in `mode` (search / vsearch / query) through the daemon or in-process."""
    from engram.service import filters_from_json

    options: dict[str, Any] = {}
    if mode != "search":
        options["chunks"] = a.get("chunks") or False
    if mode == "query":
        options.update(
            expand=a["expand"],
            rerank=a["rerank"],
            explain=a["explain"],
            candidate_limit=a["candidate_limit"],
        )
    q, n, cols = a["query"], a["limit"], tuple(a["collections"] or ())
    min_score, full, raw_filters = a["min_score"], a["full"], a["filters"]

    def work(e: Any) -> dict[str, Any]:
        f = filters_from_json(raw_filters)
        if mode == "query":
            data: dict[str, Any] = codec.encode(
                e.query_run(q, n, cols, min_score, full, filters=f, **options)
            )
            return data
        fn = e.vsearch if mode == "vsearch" else e.search
        found = fn(q, n, cols, min_score, full, filters=f, **options)
        return {"results": [wire.to_json(r) for r in found], "notices": []}

    data = await gw.run(work)
    payload: dict[str, Any] = {"results": [compact(r) for r in data["results"]]}
    for key in ("notices", "expansions", "stages"):
        if data.get(key) and (key != "stages" or a.get("explain")):
            payload[key] = data[key]
    if not payload["results"]:
        payload["hint"] = NO_MATCH
    return fit_json(payload, a["max_chars"], "Ask for fewer results (limit) or drop full.")


async def search(gw: Gateway, a: dict[str, Any]) -> str:
    """Keyword search."""
    return await run_search(gw, a, "search")


async def vsearch(gw: Gateway, a: dict[str, Any]) -> str:
    """Semantic search."""
    return await run_search(gw, a, "vsearch")


async def query(gw: Gateway, a: dict[str, Any]) -> str:
    """Hybrid search, or another mode."""
    return await run_search(gw, a, MODES[a["mode"]])


async def get(gw: Gateway, a: dict[str, Any]) -> str:
    """One document."""
    ref, start, count = a["path"], a.get("from_line"), a.get("max_lines")
    doc = await gw.run(lambda e: wire.to_json(e.get(ref, from_line=start, max_lines=count)))
    return render_document(doc, a["max_chars"])


async def multi_get(gw: Gateway, a: dict[str, Any]) -> str:
    """Several documents (in-process: plain reads of the index and files, no model)."""
    spec = ",".join(a["paths"])
    docs = await gw.run(lambda e: e.multi_get(spec, a["max_bytes"], a.get("max_lines")))
    return render_documents([wire.to_json(d) for d in docs], a["max_chars"])


async def status(gw: Gateway, a: dict[str, Any]) -> str:
    """Index, models, collections, daemon."""
    vault = await gw.vault_name()
    mcp = {"vault": vault, "agent": gw.options.agent}

    data = wire.to_json(await gw.run(lambda e: e.served_status()))
    return fit_json({"mcp": mcp, **data}, a["max_chars"])


async def active_note(gw: Gateway, a: dict[str, Any]) -> str:
    """The note open in Obsidian, as the plugin last reported it to the daemon."""
    d, note = await gw.run(lambda e: e.active_note())
    if d is None:
        why = "" if gw.options.use_daemon else " (this server was started with --no-daemon)"
        return (
            "no Obsidian is connected: the Engram plugin reports the open note to `engram serve`, "
            f"and no daemon is running for this index{why}."
        )
    if note is None:
        return (
            f"no Obsidian is connected: engram serve runs (pid {d.pid}), but no Engram plugin "
            "has reported an open note in the last 5 minutes (Obsidian is closed, the plugin "
            "is off or does not share the active note, or no note is open)."
        )
    uri = f"engram://{d.collection}/{note['path']}" if d.collection else note["path"]
    payload = {"uri": uri, **note}
    text = fit_json(payload, a["max_chars"] // (2 if a["include_text"] else 1))
    if not a["include_text"]:
        return text
    doc = await gw.run(lambda e: wire.to_json(e.get(uri)))
    return text + "\n\n" + render_document(doc, a["max_chars"] - len(text) - 2)


TOOLS = (
    Tool(
        "search",
        "Keyword search",
        "Keyword (BM25) search over every indexed note: instant, exact words and names. Use it "
        "when you know words that appear in the note; use query for questions in your own "
        "words. " + RESULTS,
        search_schema({}),
        search,
    ),
    Tool(
        "vsearch",
        "Semantic search",
        "Vector search: notes whose passages are closest in meaning to the query, even without "
        "shared words. Needs an embedding model and `engram embed` (says so otherwise). " + RESULTS,
        search_schema({"chunks": s.flag("Return several matching passages per note.")}),
        vsearch,
    ),
    Tool(
        "query",
        "Hybrid search (best quality)",
        "The best search: keywords and meaning fused (RRF), with query expansion and reranking "
        "when those models are configured (notices say what was skipped). Use it for questions "
        "and fuzzy recall; mode switches to keyword or semantic only. " + RESULTS,
        search_schema(
            {
                "mode": s.choice(
                    "hybrid (default), keyword (= search) or semantic (= vsearch).",
                    list(MODES),
                    "hybrid",
                ),
                "expand": s.flag("Expand the query with a local generator model.", True),
                "rerank": s.flag("Rerank the top candidates with a reranker model.", True),
                "explain": s.flag("Add per-stage scores to each result."),
                "chunks": s.flag("Return several matching passages per note."),
                "candidate_limit": s.integer("Candidates that reach reranking.", 1, 200, 30),
            }
        ),
        query,
    ),
    Tool(
        "get",
        "Read a note",
        "Read one note (or part of it) by path, collection/path, engram://collection/path or "
        "#docid from a search result; a :LINE suffix starts there. Returns a header (title, uri, "
        "line span) and the text; long notes are cut with the from_line to read on.",
        s.obj(
            ["path"],
            path=s.text("The note: path, collection/path, engram:// URI or #docid.", 4096, 1),
            from_line=s.integer("First line to return (1-based).", 1, 10_000_000),
            max_lines=s.integer("Most lines to return.", 0, 1_000_000),
            max_chars=s.max_chars(),
        ),
        get,
    ),
    Tool(
        "multi_get",
        "Read several notes",
        "Read several notes at once: paths, #docids or globs like projects/*.md. Files over "
        "max_bytes are listed but not read; what does not fit max_chars is named so you can "
        "get it. Paths that contain commas must be read with get.",
        s.obj(
            ["paths"],
            paths=s.texts("Paths, collection/paths, #docids or glob patterns.", 200, 4096)
            | {"minItems": 1},
            max_bytes=s.integer("Skip files larger than this many bytes.", 1, 10_000_000, 10_240),
            max_lines=s.integer("Most lines per note.", 0, 1_000_000),
            max_chars=s.max_chars(),
        ),
        multi_get,
    ),
    Tool(
        "status",
        "Index status",
        "What Engram has indexed (collections, document and embedding counts), which models are "
        "loaded, the vault memory tools act on, and whether the warm daemon (`engram serve`) "
        "answers. Use it when results look empty or stale.",
        s.obj(max_chars=s.max_chars()),
        status,
    ),
    Tool(
        "active_note",
        "Note open in Obsidian",
        "The note the user has open in Obsidian right now (uri, path, title, cursor line, "
        "selected text), as the Engram plugin reported it to the running daemon in the last "
        'few minutes; include_text adds the note itself. Says "no Obsidian is connected" when '
        "no daemon runs or no plugin has reported.",
        s.obj(
            include_text=s.flag("Also return the note's text."),
            max_chars=s.max_chars(),
        ),
        active_note,
    ),
)
