"""Queries on facts: what memory keeps about fact notes, and access counts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engram.store.tags import has_tag, tag_params


@dataclass(frozen=True)
class FactRow:
    """The derived fields of one fact note (rebuilt from the note on every index)."""

    id: str
    doc_id: int
    fact_type: str
    lifecycle: str
    importance: float
    confidence: float
    scope: str
    created_at: str  # ISO 8601 UTC
    updated_at: str
    superseded_by: str | None
    last_edited_by: str


@dataclass(frozen=True)
class FactQuery:
    """Restrictions for listing facts; empty fields restrict nothing."""

    collection: str
    types: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    scope: str | None = None
    tags: tuple[str, ...] = ()
    min_importance: float | None = None
    max_importance: float | None = None  # exclusive
    since: str | None = None  # inclusive ISO date
    until: str | None = None  # exclusive ISO date
    doc_ids: tuple[int, ...] | None = None
    ids: tuple[str, ...] | None = None


_SELECT = (
    "SELECT f.id, f.doc_id, f.fact_type, f.lifecycle, f.importance, f.confidence, f.scope,"
    " f.created_at, f.updated_at, f.superseded_by, f.last_edited_by, w.sha256 AS written_hash,"
    " d.collection, d.path, d.hash, d.title, d.mtime_ns, d.frontmatter,"
    " coalesce(a.access_count, 0) AS access_count, a.last_access"
    " FROM facts f JOIN documents d ON d.id = f.doc_id LEFT JOIN fact_access a ON a.id = f.id"
    " LEFT JOIN fact_written w ON w.id = f.id"
)


def upsert(conn: Any, row: FactRow) -> None:
    """Insert or replace the fact of a document (an id moved to another note moves too)."""
    conn.execute("DELETE FROM facts WHERE doc_id = ? AND id != ?", (row.doc_id, row.id))
    conn.execute(
        "INSERT INTO facts (id, doc_id, fact_type, lifecycle, importance, confidence, scope,"
        " created_at, updated_at, superseded_by, last_edited_by)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET doc_id = excluded.doc_id,"
        " fact_type = excluded.fact_type, lifecycle = excluded.lifecycle,"
        " importance = excluded.importance, confidence = excluded.confidence,"
        " scope = excluded.scope, created_at = excluded.created_at,"
        " updated_at = excluded.updated_at, superseded_by = excluded.superseded_by,"
        " last_edited_by = excluded.last_edited_by",
        (
            row.id,
            row.doc_id,
            row.fact_type,
            row.lifecycle,
            row.importance,
            row.confidence,
            row.scope,
            row.created_at,
            row.updated_at,
            row.superseded_by,
            row.last_edited_by,
        ),
    )


def document(conn: Any, doc_id: int) -> Any | None:
    """What refreshing a fact needs from its document row (parsed frontmatter, warnings)."""
    return conn.execute(
        "SELECT id, collection, path, title, hash, mtime_ns, frontmatter, warnings"
        " FROM documents WHERE id = ?",
        (doc_id,),
    ).fetchone()


def by_doc(conn: Any, doc_id: int) -> Any | None:
    """The fact stored for a document."""
    return conn.execute(_SELECT + " WHERE f.doc_id = ?", (doc_id,)).fetchone()


def by_id(conn: Any, fact_id: str) -> Any | None:
    """A fact by its full id."""
    return conn.execute(_SELECT + " WHERE f.id = ?", (fact_id,)).fetchone()


def by_prefix(conn: Any, collection: str, prefix: str, limit: int = 5) -> list[Any]:
    """Facts of a collection whose id starts with `prefix`."""
    like = prefix.replace("%", "").replace("_", "\\_") + "%"
    return list(
        conn.execute(
            _SELECT + " WHERE d.collection = ? AND f.id LIKE ? ESCAPE '\\' LIMIT ?",
            (collection, like, limit),
        )
    )


def delete_doc(conn: Any, doc_id: int) -> None:
    """Forget the fact of a document that is no longer a fact."""
    conn.execute("DELETE FROM facts WHERE doc_id = ?", (doc_id,))


def mark_written(conn: Any, fact_id: str, sha256: str) -> None:
    """Remember the hash Engram wrote, so a later different hash reads as a human edit."""
    conn.execute(
        "INSERT INTO fact_written (id, sha256) VALUES (?, ?)"
        " ON CONFLICT (id) DO UPDATE SET sha256 = excluded.sha256",
        (fact_id, sha256),
    )


def written_hash(conn: Any, fact_id: str) -> str | None:
    """The hash Engram last wrote to this fact's note."""
    row = conn.execute("SELECT sha256 FROM fact_written WHERE id = ?", (fact_id,)).fetchone()
    return None if row is None else row[0]


def query(conn: Any, q: FactQuery, order: str = "created", limit: int | None = None) -> list[Any]:
    """Facts matching `q`, newest first (`order="created"`) or by importance."""
    sql: list[str] = [_SELECT + " WHERE d.collection = ?"]
    params: list[Any] = [q.collection]
    if q.types:
        sql.append(f"f.fact_type IN ({','.join('?' * len(q.types))})")
        params += q.types
    if q.states:
        sql.append(f"f.lifecycle IN ({','.join('?' * len(q.states))})")
        params += q.states
    if q.scope is not None:
        sql.append("f.scope = ?")
        params.append(q.scope)
    for tag in q.tags:
        sql.append(has_tag("f.doc_id"))
        params += tag_params(tag)
    bounds: tuple[tuple[str, str, float | str | None], ...] = (
        ("f.importance", ">=", q.min_importance),
        ("f.importance", "<", q.max_importance),
        ("f.created_at", ">=", q.since),
        ("f.created_at", "<", q.until),
    )
    for column, op, value in bounds:
        if value is not None:
            sql.append(f"{column} {op} ?")
            params.append(value)
    in_lists: tuple[tuple[str, tuple[Any, ...] | None], ...] = (
        ("f.doc_id", q.doc_ids),
        ("f.id", q.ids),
    )
    for column, values in in_lists:
        if values is not None:
            sql.append(f"{column} IN ({','.join('?' * len(values)) or 'NULL'})")
            params += values
    ordering = {
        "created": "f.created_at DESC, f.id",
        "importance": "f.importance DESC, f.updated_at DESC, f.id",
    }[order]
    text = " AND ".join(sql) + f" ORDER BY {ordering}"
    if limit is not None:
        text += " LIMIT ?"
        params.append(limit)
    return list(conn.execute(text, params))


def bump_access(conn: Any, fact_ids: Iterable[str], when: str) -> None:
    """Count a recall of each fact (the note itself is not touched)."""
    conn.executemany(
        "INSERT INTO fact_access (id, access_count, last_access) VALUES (?, 1, ?)"
        " ON CONFLICT (id) DO UPDATE SET access_count = access_count + 1,"
        " last_access = excluded.last_access",
        [(i, when) for i in fact_ids],
    )


def note_names(conn: Any, collection: str) -> list[Any]:
    """(id, path, title, aliases JSON) of every note of a collection, for linking."""
    return list(
        conn.execute(
            "SELECT id, path, title, aliases FROM documents WHERE collection = ? ORDER BY path",
            (collection,),
        )
    )


def entity_values(conn: Any, collection: str) -> list[str]:
    """Every `entities` value written on the facts of a collection."""
    rows = conn.execute(
        "SELECT DISTINCT je.value FROM facts f JOIN documents d ON d.id = f.doc_id,"
        " json_each(d.frontmatter, '$.entities') je"
        " WHERE d.collection = ? AND json_valid(d.frontmatter)"
        " AND json_type(d.frontmatter, '$.entities') = 'array'",
        (collection,),
    )
    return [str(r[0]) for r in rows if isinstance(r[0], str)]
