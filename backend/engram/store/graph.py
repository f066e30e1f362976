"""Reads for the link graph: notes, resolved edges, backlinks, outgoing and unresolved links."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LinkRow:
    """A stored link seen from one note: the note on the other end (if any) and the link."""

    other_id: int | None  # backlinks: the linking note; outgoing: the resolved note
    other_path: str | None  # outgoing: the resolved file (note or attachment)
    other_title: str | None
    source_hash: str  # content hash of the note the link is written in (for its line)
    line: int
    kind: str
    target: str
    heading: str | None
    block: str | None
    display: str | None
    embed: int
    heading_ok: int | None
    block_ok: int | None


_FIELDS = (
    "l.line, l.kind, l.target, l.heading, l.block, l.display, l.embed, l.heading_ok, l.block_ok"
)


def notes(conn: Any, collection: str) -> list[tuple[int, str, str]]:
    """(id, path, title) of every document of a collection, by path."""
    rows = conn.execute(
        "SELECT id, path, title FROM documents WHERE collection = ? ORDER BY path", (collection,)
    )
    return [(r[0], r[1], r[2]) for r in rows]


def lookup_rows(conn: Any, collection: str) -> list[tuple[int, str, str, list[str]]]:
    """(id, path, title, aliases) of every document of a collection, for human input."""
    rows = conn.execute(
        "SELECT id, path, title, aliases FROM documents WHERE collection = ? ORDER BY path",
        (collection,),
    )
    return [(r[0], r[1], r[2], json.loads(r[3] or "[]")) for r in rows]


def edges(conn: Any, collection: str, leave_out: Sequence[str] = ()) -> list[tuple[int, int, int]]:
    """(source id, target id, number of links) between different notes of a collection;
    links written in notes under the `leave_out` path prefixes are not counted."""
    not_in, params = _not_under(leave_out)
    rows = conn.execute(
        "SELECT l.doc_id, l.resolved_doc_id, count(*) FROM links l"
        " JOIN documents d ON d.id = l.doc_id"
        " WHERE d.collection = ? AND l.resolved_doc_id IS NOT NULL"
        f" AND l.resolved_doc_id != l.doc_id{not_in} GROUP BY l.doc_id, l.resolved_doc_id",
        (collection, *params),
    )
    return [(r[0], r[1], r[2]) for r in rows]


def _not_under(prefixes: Sequence[str]) -> tuple[str, list[str]]:
    """SQL leaving out documents `d` under any of the path prefixes, and its parameters."""
    sql = "".join(" AND d.path NOT LIKE ? ESCAPE '\\'" for _ in prefixes)
    escaped = [p.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for p in prefixes]
    return sql, [e + "%" for e in escaped]


def graph_file_state(conn: Any, collection: str) -> str | None:
    """What the collection's graph index file was last written from (see set_graph_file_state)."""
    from engram.store.documents import get_meta

    return get_meta(conn, f"graph_file:{collection}")


def set_graph_file_state(conn: Any, collection: str, state: str) -> None:
    """Record the graph generation and note count the collection's graph index file now
    shows: a later process need not rebuild the graph to learn the file is current."""
    from engram.store.documents import set_meta

    set_meta(conn, f"graph_file:{collection}", state)


def note_count(conn: Any, collection: str) -> int:
    """How many documents a collection has."""
    row = conn.execute("SELECT count(*) FROM documents WHERE collection = ?", (collection,))
    return int(row.fetchone()[0])


def backlinks(conn: Any, doc_id: int, leave_out: Sequence[str] = ()) -> list[LinkRow]:
    """Links that resolve to a note, with the linking note, in path and line order; links
    written in notes under the `leave_out` path prefixes are not listed."""
    not_in, params = _not_under(leave_out)
    rows = conn.execute(
        "SELECT d.id, d.path, d.title, d.hash, " + _FIELDS + " FROM links l"
        f" JOIN documents d ON d.id = l.doc_id WHERE l.resolved_doc_id = ?{not_in}"
        " ORDER BY d.path, l.line, l.id",
        (doc_id, *params),
    )
    return [LinkRow(*r) for r in rows]


def outgoing(conn: Any, doc_id: int) -> list[LinkRow]:
    """Links written in a note, with where each resolves, in line order."""
    rows = conn.execute(
        "SELECT l.resolved_doc_id, l.resolved_path, t.title, s.hash, " + _FIELDS + " FROM links l"
        " JOIN documents s ON s.id = l.doc_id"
        " LEFT JOIN documents t ON t.id = l.resolved_doc_id"
        " WHERE l.doc_id = ? ORDER BY l.line, l.id",
        (doc_id,),
    )
    return [LinkRow(*r) for r in rows]


def unresolved(conn: Any, collection: str, subpaths: bool = False) -> list[tuple[Any, ...]]:
    """Links of a collection to no file (and, with `subpaths`, to a missing heading or block):
    (source path, source hash) + link fields, by source path and line."""
    broken = " OR l.heading_ok = 0 OR l.block_ok = 0" if subpaths else ""
    rows = conn.execute(
        "SELECT d.path, d.hash, l.resolved_path, " + _FIELDS + " FROM links l"
        " JOIN documents d ON d.id = l.doc_id WHERE d.collection = ? AND l.key IS NOT NULL"
        f" AND (l.resolved_path IS NULL{broken}) ORDER BY d.path, l.line, l.id",
        (collection,),
    )
    return [tuple(r) for r in rows]


def texts(conn: Any, hashes: Iterable[str]) -> dict[str, str]:
    """Stored file texts by content hash."""
    rows = conn.execute(
        "SELECT hash, text FROM content WHERE hash IN (SELECT value FROM json_each(?))",
        (json.dumps(list(set(hashes))),),
    )
    return {r[0]: r[1] for r in rows}


def typed_documents(conn: Any, collection: str) -> list[tuple[Any, ...]]:
    """(id, path, title, fact id or None, fact type or '', frontmatter JSON) of every
    document of a collection, by path, for the graph index file."""
    rows = conn.execute(
        "SELECT d.id, d.path, d.title, f.id, coalesce(f.fact_type, ''), d.frontmatter"
        " FROM documents d LEFT JOIN facts f ON f.doc_id = d.id"
        " WHERE d.collection = ? ORDER BY d.path",
        (collection,),
    )
    return [tuple(r) for r in rows]


def typed_links(conn: Any, collection: str) -> Iterator[tuple[int, str, int, str, int | None, int]]:
    """(source id, kind, embed, target as written, resolved note id or None, is a file) of
    every link of a collection, read as they are used (1.9 million rows in a large vault);
    `is a file` is 1 when the target resolves to an attachment."""
    rows = conn.execute(
        "SELECT l.doc_id, l.kind, l.embed, l.target, l.resolved_doc_id,"
        " l.resolved_path IS NOT NULL FROM links l JOIN documents d ON d.id = l.doc_id"
        " WHERE d.collection = ? ORDER BY l.doc_id, l.line, l.id",
        (collection,),
    )
    return (tuple(r) for r in rows)
