"""Reads for the link graph: notes, resolved edges, backlinks, outgoing and unresolved links."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
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


def _among(ids: Sequence[int] | None, column: str) -> tuple[str, tuple[Any, ...]]:
    """A condition keeping `column` to `ids` (None: no condition) and its parameter."""
    if ids is None:
        return "", ()
    return f" AND {column} IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),)


def typed_documents(
    conn: Any, collection: str, ids: Sequence[int] | None = None
) -> list[tuple[Any, ...]]:
    """(id, path, title, fact type or '', frontmatter JSON) of the documents of a collection
    (those of `ids`, else all), by path, for the graph index file."""
    among, params = _among(ids, "d.id")
    rows = conn.execute(
        "SELECT d.id, d.path, d.title, coalesce(f.fact_type, ''), d.frontmatter"
        " FROM documents d LEFT JOIN facts f ON f.doc_id = d.id"
        " WHERE d.collection = ?" + among + " ORDER BY d.path",
        (collection, *params),
    )
    return [tuple(r) for r in rows]


def typed_links(
    conn: Any, collection: str, ids: Sequence[int] | None = None
) -> Iterator[tuple[int, str, int, str, str | None, int]]:
    """(source id, kind, embed, target as written, path of the note it resolves to or None,
    is a file) of the links written in the documents of a collection (those of `ids`, else
    all: 1.9 million rows in a large vault, read as they are used); `is a file` is 1 when
    the target resolves to a file that is not a note of the collection."""
    among, params = _among(ids, "l.doc_id")
    rows = conn.execute(
        "SELECT l.doc_id, l.kind, l.embed, l.target, r.path, l.resolved_path IS NOT NULL"
        " FROM links l JOIN documents d ON d.id = l.doc_id"
        " LEFT JOIN documents r ON r.id = l.resolved_doc_id AND r.collection = d.collection"
        " WHERE d.collection = ?" + among + " ORDER BY l.doc_id, l.line, l.id",
        (collection, *params),
    )
    return (tuple(r) for r in rows)


def fact_paths(conn: Any, collection: str) -> dict[str, str]:
    """The note path of each fact of a collection, by fact id."""
    rows = conn.execute(
        "SELECT f.id, d.path FROM facts f JOIN documents d ON d.id = f.doc_id"
        " WHERE d.collection = ?",
        (collection,),
    )
    return {r[0]: r[1] for r in rows}


def documents_where(conn: Any, collection: str, keep: Callable[[str], bool]) -> list[int]:
    """Ids of the documents of a collection whose path `keep` accepts, read in one pass."""
    rows = conn.execute("SELECT id, path FROM documents WHERE collection = ?", (collection,))
    return [i for i, p in rows if keep(p)]


def citing(conn: Any, collection: str, fact_ids: Iterable[str]) -> set[str]:
    """Paths of the documents of a collection whose properties name one of these fact ids
    (one pass over the collection, however many ids)."""
    ids = sorted(set(fact_ids))
    if not ids:
        return set()
    rows = conn.execute(
        "SELECT DISTINCT d.path FROM documents d, json_each(?) f"
        " WHERE d.collection = ? AND instr(d.frontmatter, f.value) > 0",
        (json.dumps(ids), collection),
    )
    return {r[0] for r in rows}


def graph_dirty(conn: Any, collection: str) -> list[tuple[str, str, int]]:
    """(kind, key, n) of what changed in a collection since its graph file was written: `p`
    and a note path, or `f` and a fact id (store/migrations.py m020)."""
    rows = conn.execute("SELECT kind, key, n FROM graph_dirty WHERE collection = ?", (collection,))
    return [(r[0], r[1], r[2]) for r in rows]


def clear_graph_dirty(
    conn: Any, collection: str, rows: Iterable[tuple[str, str, int]] | None = None
) -> None:
    """Forget these marks (all of the collection's with None); a mark made again since it was
    read (a higher `n`) stays."""
    if rows is None:
        conn.execute("DELETE FROM graph_dirty WHERE collection = ?", (collection,))
        return
    conn.executemany(
        "DELETE FROM graph_dirty WHERE collection = ? AND kind = ? AND key = ? AND n = ?",
        [(collection, *row) for row in rows],
    )


def tag_names(conn: Any, collection: str) -> dict[str, str]:
    """The name of each tag (and tag level) the collection's graph file shows, by key."""
    rows = conn.execute("SELECT key, name FROM graph_tag_names WHERE collection = ?", (collection,))
    return {r[0]: r[1] for r in rows}


def set_tag_names(
    conn: Any, collection: str, names: dict[str, str], roots: Iterable[str] | None = None
) -> None:
    """Record the names the graph file now shows: of the tags under `roots` (all: None)."""
    if roots is None:
        conn.execute("DELETE FROM graph_tag_names WHERE collection = ?", (collection,))
    else:
        conn.executemany(
            "DELETE FROM graph_tag_names WHERE collection = ?"
            " AND (key = ? OR (key > ? AND key < ?))",
            [(collection, r, r + "/", r + "0") for r in roots],
        )
    conn.executemany(
        "INSERT INTO graph_tag_names (collection, key, name) VALUES (?, ?, ?)",
        [(collection, k, v) for k, v in names.items()],
    )


def tagged(conn: Any, collection: str, keys: Iterable[str]) -> set[str]:
    """Paths of the documents of a collection carrying one of these tag keys."""
    rows = conn.execute(
        "SELECT DISTINCT d.path FROM tags t JOIN documents d ON d.id = t.doc_id"
        " WHERE d.collection = ? AND t.key IN (SELECT value FROM json_each(?))",
        (collection, json.dumps(list(keys))),
    )
    return {r[0] for r in rows}


def forget(conn: Any, collection: str) -> None:
    """Stop keeping a collection's graph file up to date (removed, renamed: its next file is
    written whole), and drop what it was kept by."""
    for table in ("graph_files", "graph_dirty", "graph_tag_names"):
        conn.execute(f"DELETE FROM {table} WHERE collection = ?", (collection,))


def graph_file_kept(conn: Any, collection: str) -> bool:
    """Whether changes to the collection are marked for its graph file (written whole)."""
    row = conn.execute("SELECT 1 FROM graph_files WHERE collection = ?", (collection,))
    return row.fetchone() is not None


def keep_graph_file(conn: Any, collection: str) -> None:
    """The collection's graph file is written whole: mark changes to it from now on."""
    conn.execute("INSERT OR IGNORE INTO graph_files (collection) VALUES (?)", (collection,))
