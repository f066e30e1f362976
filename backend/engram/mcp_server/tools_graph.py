"""Graph tools over the vault's wiki-links: backlinks, neighbours, paths, rank, themes.

They need no model, so they read the index in-process (SQLite in WAL mode lets them run beside
the daemon). Without `collection` they use the vault's collection (engram:// URIs name theirs).
"""

from __future__ import annotations

from typing import Any

from engram.mcp_server import schema as s
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import fit_json
from engram.mcp_server.schema import Tool

NOTE = "The note: its path, file name, title, alias or engram://collection/path URI."
COLLECTION = "The collection (default: the vault's, or the only one)."
HINT = "Narrow it down (depth, limit) or raise max_chars."


async def _collection(gw: Gateway, a: dict[str, Any], note: str | None = None) -> str | None:
    if a.get("collection"):
        return str(a["collection"])
    if note and note.startswith("engram://"):
        return None
    return await gw.vault_name()


async def backlinks(gw: Gateway, a: dict[str, Any]) -> str:
    """Links to a note."""
    col = await _collection(gw, a, a["note"])
    data = await gw.run(lambda e: e.backlinks(a["note"], col).to_dict())
    return fit_json(data, a["max_chars"], HINT)


async def neighbors(gw: Gateway, a: dict[str, Any]) -> str:
    """Notes within N links."""
    col = await _collection(gw, a, a["note"])
    types = a.get("edge_types")
    data = await gw.run(
        lambda e: (
            e.typed_neighbors(a["note"], types, a["depth"], a["direction"], col)
            if types
            else e.neighbors(a["note"], a["depth"], col, a["direction"])
        ).to_dict()
    )
    return fit_json(data, a["max_chars"], HINT)


async def path(gw: Gateway, a: dict[str, Any]) -> str:
    """The shortest chain of links between two notes."""
    col = await _collection(gw, a, a["source"])
    data = await gw.run(lambda e: e.path(a["source"], a["target"], col, a["directed"]).to_dict())
    if not data["found"]:
        data["hint"] = "no chain of links joins them" + ("" if a["directed"] else " either way")
    return fit_json(data, a["max_chars"], HINT)


async def rank(gw: Gateway, a: dict[str, Any]) -> str:
    """Influential or bridging notes, maybe about a topic."""
    col = await _collection(gw, a)
    data = await gw.run(lambda e: e.rank(a.get("about"), a["by"], a["limit"], col).to_dict())
    return fit_json(data, a["max_chars"], HINT)


async def themes(gw: Gateway, a: dict[str, Any]) -> str:
    """Communities of linked notes."""
    col = await _collection(gw, a)
    found = await gw.run(lambda e: [t.to_dict() for t in e.themes(col, a["min_size"])])
    payload: dict[str, Any] = {"themes": found[: a["limit"]]}
    if len(found) > a["limit"]:
        payload["more"] = f"{len(found) - a['limit']} smaller themes not shown (raise limit)"
    return fit_json(payload, a["max_chars"], HINT)


TOOLS = (
    Tool(
        "graph_backlinks",
        "Backlinks",
        "Every link to a note from other notes, each with its line number and that line's "
        "text. Use it to see where a topic, person or project is mentioned.",
        s.obj(
            ["note"],
            note=s.text(NOTE, 4096, 1),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        backlinks,
    ),
    Tool(
        "graph_neighbors",
        "Connected notes",
        "Notes up to depth links away from a note (find connections), following links out, "
        "backlinks in, or both; each with its distance.",
        s.obj(
            ["note"],
            note=s.text(NOTE, 4096, 1),
            depth=s.integer("How many links away.", 1, 5, 1),
            direction=s.choice(
                "both, out (links) or in (backlinks).", ["both", "out", "in"], "both"
            ),
            edge_types={
                "type": "array",
                "description": "Follow only these typed edges of the graph index (tags and "
                "unresolved targets become nodes too): wiki_link, embed, tag, "
                "frontmatter_relation (entities, supersedes, contradictsWith...).",
                "items": {
                    "type": "string",
                    "enum": ["wiki_link", "embed", "tag", "frontmatter_relation"],
                },
                "minItems": 1,
                "maxItems": 4,
            },
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        neighbors,
    ),
    Tool(
        "graph_path",
        "Path between notes",
        "The shortest chain of links joining two notes (find path), each step with the "
        "direction of its link. Use it to explain how two ideas connect.",
        s.obj(
            ["source", "target"],
            source=s.text("Where the path starts. " + NOTE, 4096, 1),
            target=s.text("Where it ends. " + NOTE, 4096, 1),
            directed=s.flag("Follow links only in their written direction."),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        path,
    ),
    Tool(
        "graph_rank",
        "Rank notes",
        "The most influential notes (PageRank) or the bridges between topics (betweenness); "
        "with about, the notes about that topic, central among them (each with its relevance "
        "and how many of the topic's notes link to it). Use it to find the hub notes of a "
        "vault or subject.",
        s.obj(
            about=s.text("A topic to rank around (search words); omit for the whole vault.", 2000),
            by=s.choice(
                "influence (PageRank) or bridging (betweenness).",
                ["influence", "bridging"],
                "influence",
            ),
            limit=s.integer("How many notes.", 1, 100, 20),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        rank,
    ),
    Tool(
        "graph_themes",
        "Detect themes",
        "Clusters of densely linked notes (Louvain communities), largest first, each with its "
        "top notes and tags. Use it for an overview of what a vault is about.",
        s.obj(
            min_size=s.integer("Smallest cluster to report.", 1, 1000, 2),
            limit=s.integer("Most themes to return.", 1, 100, 10),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        themes,
    ),
)
