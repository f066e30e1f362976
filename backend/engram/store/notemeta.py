"""Queries behind a note's metadata: links that may point at it, and files sharing its name."""

from __future__ import annotations

from typing import Any


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def links_mentioning(conn: Any, collection: str, key: str, limit: int = 2000) -> list[Any]:
    """Links in a collection whose raw target contains `key` (case-insensitive), with source.

    A superset of the links that resolve to a note with that lookup key; the caller resolves
    each one to keep the true backlinks.
    """
    return list(
        conn.execute(
            "SELECT l.target, l.kind, l.heading, l.block, l.line, d.path, d.title, d.hash"
            " FROM links l JOIN documents d ON d.id = l.doc_id"
            " WHERE d.collection = ? AND l.target LIKE ? ESCAPE '\\'"
            " ORDER BY d.path, l.line LIMIT ?",
            (collection, "%" + _like_escape(key) + "%", limit),
        )
    )


def paths_named(conn: Any, collection: str, filename: str) -> list[str]:
    """Paths in a collection whose last part is `filename` (case-insensitive)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT path FROM documents WHERE collection = ?"
            " AND (path = ? COLLATE NOCASE OR path LIKE ? ESCAPE '\\')",
            (collection, filename, "%/" + _like_escape(filename)),
        )
    ]
