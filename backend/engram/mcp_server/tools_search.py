"""Search and read tools: search, vsearch, query, get, multi_get, status, active_note, tags."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from engram import codec
from engram.mcp_server import args
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import fit_json, fit_page, render_document, render_documents
from engram.mcp_server.schema import Tool
from engram.service import requests as rq
from engram.service.engram import Engram

T = TypeVar("T")
NO_MATCH = "no matches: try other words, the query tool (hybrid), or fewer filters"
SYNTAX = (
    'What to look for: words rank by relevance; "exact phrase" is required; -word excludes; '
    "word* is a prefix; inline filters path:folder/ tag:name after:2024-01-01 before:2024-06 "
    "key:value (a property)."
)
RESULTS = (
    "Returns JSON {results: [{docid, uri, title, score 0..1, line, snippet}]}; read a note "
    "with get (uri or #docid)."
)
SEARCH_DOCS = {"q": SYNTAX, "full": "each result carries its note's whole text (costly)"}


def compact(result: dict[str, Any]) -> dict[str, Any]:
    """A search result without what an agent cannot use (offsets, empty fields)."""
    skip = {"highlights", "collection", "path"}
    return {k: v for k, v in result.items() if k not in skip and v not in (None, "", [], {})}


def results(data: dict[str, Any], max_chars: int, explain: bool = False) -> str:
    """Search results (and a query's notices, expansions and, asked for, stages) as JSON."""
    payload: dict[str, Any] = {"results": [compact(r) for r in data["results"]]}
    for key in ("notices", "expansions", "stages"):
        if data.get(key) and (key != "stages" or explain):
            payload[key] = data[key]
    if not payload["results"]:
        payload["hint"] = NO_MATCH
    return fit_json(payload, max_chars, "Ask for fewer results (n) or drop full.")


async def search(gw: Gateway, r: rq.Search, x: args.Budget) -> str:
    """Keyword search."""
    found = await gw.send(Engram.search, r)
    return results({"results": codec.encode(found)}, x.max_chars)


async def vsearch(gw: Gateway, r: rq.VSearch, x: args.Budget) -> str:
    """Semantic search."""
    found = await gw.send(Engram.vsearch, r)
    return results({"results": codec.encode(found)}, x.max_chars)


async def query(gw: Gateway, r: rq.Query, x: args.Mode) -> str:
    """Hybrid search, or keyword or semantic alone."""
    if x.mode == "keyword":
        return await search(gw, _as(rq.Search, r), x)
    if x.mode == "semantic":
        return await vsearch(gw, _as(rq.VSearch, r), x)
    run = await gw.send(Engram.query_run, r)
    return results(codec.encode(run), x.max_chars, r.explain)


def _as(kind: type[T], r: rq.Search) -> T:
    """A query's request as one of the requests it extends (search, vsearch)."""
    return kind(**{f.name: getattr(r, f.name) for f in dataclasses.fields(kind)})  # type: ignore[arg-type]


async def get(gw: Gateway, r: rq.Get, x: args.Budget) -> str:
    """One document."""
    doc = await gw.send(Engram.get, r)
    return render_document(codec.encode(doc), x.max_chars)


async def multi_get(gw: Gateway, r: args.MultiGet, x: args.Budget) -> str:
    """Several documents (in-process: plain reads of the index and files, no model)."""
    if not r.paths:
        from engram.errors import InvalidInputError

        raise InvalidInputError("paths: name at least one note")
    docs = await gw.run(Engram.multi_get, ",".join(r.paths), r.max_bytes, r.max_lines)
    return render_documents(codec.encode(docs), x.max_chars)


async def status(gw: Gateway, r: args.Nothing, x: args.Budget) -> str:
    """Index, models, collections, daemon."""
    mcp = {"vault": await gw.vault_name(), "agent": gw.options.agent}
    return fit_json({"mcp": mcp, **await gw.status()}, x.max_chars)


async def active_note(gw: Gateway, r: args.ActiveNoteArgs, x: args.Budget) -> str:
    """The note open in Obsidian, as the plugin last reported it to the daemon."""
    found = await gw.active_note()
    if not found.daemon:
        why = "" if gw.daemon_used() else " (this server was started with --no-daemon)"
        return (
            "no Obsidian is connected: the Engram plugin reports the open note to `engram serve`, "
            f"and no daemon is running for this index{why}."
        )
    if found.note is None:
        return (
            f"no Obsidian is connected: engram serve runs (pid {found.pid}), but no Engram "
            "plugin has reported an open note in the last 5 minutes (Obsidian is closed, the "
            "plugin is off or does not share the active note, or no note is open)."
        )
    path = str(found.note["path"])
    uri = f"engram://{found.collection}/{path}" if found.collection else path
    text = fit_json({"uri": uri, **found.note}, x.max_chars // (2 if r.include_text else 1))
    if not r.include_text:
        return text
    doc = await gw.run(Engram.get, uri)
    return text + "\n\n" + render_document(codec.encode(doc), x.max_chars - len(text) - 2)


async def tags(gw: Gateway, r: rq.Tags, x: args.TagsPage) -> str:
    """Every tag with its note count, a page at a time."""
    found = await gw.run(Engram.tags, r.collections, r.sort)
    listed = [[t.name, t.count] for t in found.tags]
    head = {"notes": found.notes, "format": "[tag, notes]; nested tags follow their parent"}
    return fit_page(head, "tags", listed, x.cursor, x.limit, x.max_chars)


TOOLS: tuple[Tool[Any, Any], ...] = (
    Tool(
        "search",
        "Keyword search",
        "Keyword (BM25) search over every indexed note: instant, exact words and names. Use it "
        "when you know words that appear in the note; use query for questions in your own "
        "words. " + RESULTS,
        rq.Search,
        args.Budget,
        search,
        docs=SEARCH_DOCS,
    ),
    Tool(
        "vsearch",
        "Semantic search",
        "Vector search: notes whose passages are closest in meaning to the query, even without "
        "shared words. Needs an embedding model and `engram embed` (says so otherwise). " + RESULTS,
        rq.VSearch,
        args.Budget,
        vsearch,
        docs=SEARCH_DOCS,
    ),
    Tool(
        "query",
        "Search notes (best quality)",
        "The best search: keywords and meaning fused, with query expansion and reranking "
        "when those models are configured (notices say what was skipped). Use it for questions "
        "and fuzzy recall; mode keyword finds exact words and names. " + RESULTS,
        rq.Query,
        args.Mode,
        query,
        docs=SEARCH_DOCS,
    ),
    Tool(
        "get",
        "Read a note",
        "Read one note (or part of it) by path, collection/path, engram://collection/path or "
        "#docid from a search result; a :LINE suffix starts there. Returns a header (title, uri, "
        "line span) and the text; a long note is cut and says which line to read on from.",
        rq.Get,
        args.Budget,
        get,
        docs={"from": "first line to return (1-based)", "lines": "most lines to return"},
    ),
    Tool(
        "multi_get",
        "Read several notes",
        "Read several notes at once: paths, #docids or globs like projects/*.md. Files over "
        "maxBytes are listed but not read; what does not fit maxChars is named so you can "
        "get it. Paths that contain commas must be read with get.",
        args.MultiGet,
        args.Budget,
        multi_get,
    ),
    Tool(
        "status",
        "Index status",
        "What Engram has indexed (collections, document and embedding counts), which models are "
        "loaded, the vault memory tools act on, and whether the warm daemon (`engram serve`) "
        "answers. Use it when results look empty or stale.",
        args.Nothing,
        args.Budget,
        status,
    ),
    Tool(
        "active_note",
        "Note open in Obsidian",
        "The note the user has open in Obsidian right now (uri, path, title, cursor line, "
        "selected text), as the Engram plugin reported it to the running daemon in the last "
        'few minutes; includeText adds the note itself. Says "no Obsidian is connected" when '
        "no daemon runs or no plugin has reported.",
        args.ActiveNoteArgs,
        args.Budget,
        active_note,
    ),
    Tool(
        "tags",
        "List tags",
        "Every tag with its number of notes, as Obsidian's tag pane shows them: case ignored, "
        "nested tags (#a/b) right after their parent, whose count includes theirs. Use a tag "
        "in search as tag:name. Paged: pass nextCursor as cursor for more.",
        rq.Tags,
        args.TagsPage,
        tags,
    ),
)
