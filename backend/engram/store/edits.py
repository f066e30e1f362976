"""Reads for note edits: the links a move may break, and the notes that link to a file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LinkAt:
    """A stored link with its note (path and content hash) and where it resolves."""

    source: str
    source_hash: str
    kind: str
    target: str
    heading: str | None
    block: str | None
    display: str | None
    embed: int
    line: int
    resolved_path: str | None


def links_for_move(
    conn: Any, collection: str, path: str, doc_id: int | None, old_key: str, new_key: str
) -> list[LinkAt]:
    """Links of a collection that a move of `path` may change: links resolving to it, links
    written in it, and links whose lookup key is the new name's (it may capture them).

    A link resolves only to a file with its own lookup key, so `old_key` narrows the first
    kind to an indexed lookup.
    """
    rows = conn.execute(
        "SELECT d.path, d.hash, l.kind, l.target, l.heading, l.block, l.display, l.embed,"
        " l.line, l.resolved_path FROM links l JOIN documents d ON d.id = l.doc_id"
        " WHERE d.collection = ? AND ((l.key = ? AND l.resolved_path = ?) OR l.key = ?"
        " OR l.doc_id = ?) ORDER BY d.path, l.line, l.id",
        (collection, old_key, path, new_key, doc_id),
    )
    return [LinkAt(*r) for r in rows]


def links_by_keys(
    conn: Any, collection: str, keys: tuple[str, ...], doc_id: int | None
) -> list[LinkAt]:
    """Links of a collection whose lookup key is one of `keys` (resolved or not), and every
    link written in the document `doc_id`: what a move may change when the stored
    resolutions cannot be trusted (a dry run over an index behind the files)."""
    marks = ", ".join("?" * len(keys))
    rows = conn.execute(
        "SELECT d.path, d.hash, l.kind, l.target, l.heading, l.block, l.display, l.embed,"
        " l.line, l.resolved_path FROM links l JOIN documents d ON d.id = l.doc_id"
        f" WHERE d.collection = ? AND (l.key IN ({marks}) OR l.doc_id = ?)"
        " ORDER BY d.path, l.line, l.id",
        (collection, *keys, doc_id),
    )
    return [LinkAt(*r) for r in rows]


def linking_notes(conn: Any, collection: str, path: str, key: str) -> list[str]:
    """Paths of the notes (other than `path`) with a link resolving to `path` (lookup `key`)."""
    rows = conn.execute(
        "SELECT DISTINCT d.path FROM links l JOIN documents d ON d.id = l.doc_id"
        " WHERE d.collection = ? AND l.key = ? AND l.resolved_path = ? AND d.path != ?"
        " ORDER BY d.path",
        (collection, key, path, path),
    )
    return [r[0] for r in rows]


def document_id(conn: Any, collection: str, path: str) -> tuple[int, str] | None:
    """(id, content hash) of an indexed document, or None."""
    row = conn.execute(
        "SELECT id, hash FROM documents WHERE collection = ? AND path = ?", (collection, path)
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))
