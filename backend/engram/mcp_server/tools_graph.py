"""Graph tools over the vault's wiki-links: backlinks, neighbours, paths, rank, themes.

Without `collection` they use the vault's collection (engram:// URIs name theirs). Lists come
a page at a time, with their total and the cursor of the next page.
"""

from __future__ import annotations

from typing import Any

from engram import codec
from engram.mcp_server import args
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import fit_json, fit_page
from engram.mcp_server.schema import Tool
from engram.service import requests as rq
from engram.service.engram import Engram

HINT = "Narrow it down (depth, limit) or raise maxChars."
PAGED = " Paged: pass nextCursor as cursor for more."


async def _collection(gw: Gateway, x: args.InCollection, note: str | None = None) -> str | None:
    return await gw.collection(x.collection, note)


async def backlinks(gw: Gateway, r: args.Backlinks, x: args.Page) -> str:
    """The notes that link to a note, each with its linking lines, a page of notes at a time."""
    found = await gw.run(Engram.backlinks, r.note, await _collection(gw, x, r.note))
    by_note: dict[str, dict[int, str]] = {}
    for link in found.links:  # two links on one line: the line once
        by_note.setdefault(link.path or link.target, {}).setdefault(link.line, link.context)
    notes = [{"path": path, "lines": list(lines.items())} for path, lines in by_note.items()]
    head = {"note": found.note.path, "title": found.note.title, "links": len(found.links)}
    return fit_page(head, "from", notes, x.cursor, x.limit, x.max_chars)


async def neighbors(gw: Gateway, r: rq.Neighbors, x: args.Edges) -> str:
    """Notes within N links."""
    col = await _collection(gw, x, r.note)
    if x.edge_types:
        typed = await gw.run(
            Engram.typed_neighbors, r.note, x.edge_types, r.depth, r.direction, col
        )
        data: dict[str, Any] = codec.encode(typed)
    else:
        data = codec.encode(await gw.run(Engram.neighbors, r.note, r.depth, col, r.direction))
    items = data.pop("neighbors")
    return fit_page(data, "neighbors", items, x.cursor, x.limit, x.max_chars)


async def path(gw: Gateway, r: args.NotePath, x: args.InCollection) -> str:
    """The shortest chain of links between two notes."""
    col = await _collection(gw, x, r.source)
    found = await gw.run(Engram.path, r.source, r.target, col, r.directed)
    data: dict[str, Any] = codec.encode(found)
    if not found.found:
        data["hint"] = "no chain of links joins them" + ("" if r.directed else " either way")
    return fit_json(data, x.max_chars, HINT)


async def rank(gw: Gateway, r: args.Rank, x: args.InCollection) -> str:
    """Influential or bridging notes, maybe about a topic."""
    ranked = await gw.run(Engram.rank, r.about, r.by, r.n, await _collection(gw, x))
    return fit_json(codec.encode(ranked), x.max_chars, HINT)


async def themes(gw: Gateway, r: args.Themes, x: args.Page) -> str:
    """Communities of linked notes, largest first."""
    found = await gw.run(Engram.themes, await _collection(gw, x), r.min_size)
    return fit_page({}, "themes", codec.encode(found), x.cursor, x.limit, x.max_chars)


NOTE = "the note: its path, file name, title, alias or engram://collection/path"
TOOLS: tuple[Tool[Any, Any], ...] = (
    Tool(
        "graph_backlinks",
        "Backlinks",
        "The notes that link to a note, each with its linking lines as [line, text]. Use it to "
        "see where a topic, person or project is mentioned; total counts the notes." + PAGED,
        args.Backlinks,
        args.Page,
        backlinks,
        docs={"note": NOTE},
    ),
    Tool(
        "graph_neighbors",
        "Connected notes",
        "Notes up to depth links away from a note (find connections), following links out, "
        "backlinks in, or both; each with its distance." + PAGED,
        rq.Neighbors,
        args.Edges,
        neighbors,
        docs={"path": NOTE},
    ),
    Tool(
        "graph_path",
        "Path between notes",
        "The shortest chain of links joining two notes (find path), each step with the "
        "direction of its link. Use it to explain how two ideas connect.",
        args.NotePath,
        args.InCollection,
        path,
    ),
    Tool(
        "graph_rank",
        "Rank notes",
        "The most influential notes (PageRank) or the bridges between topics (betweenness); "
        "with about, the notes about that topic, central among them (each with its relevance "
        "and how many of the topic's notes link to it). Use it to find the hub notes of a "
        "vault or subject.",
        args.Rank,
        args.InCollection,
        rank,
    ),
    Tool(
        "graph_themes",
        "Detect themes",
        "Clusters of densely linked notes (Louvain communities), largest first, each with its "
        "top notes and tags. Use it for an overview of what a vault is about." + PAGED,
        args.Themes,
        args.Page,
        themes,
    ),
)
