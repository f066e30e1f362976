"""Lookups and housekeeping queries: listing, counts, finding documents, integrity."""

from __future__ import annotations

import json
from typing import Any

_DOC = (
    "SELECT id, collection, path, title, hash, size, body_line, doc_date, indexed_at,"
    " mtime_ns, frontmatter FROM documents"
)


def collection_counts(conn: Any) -> dict[str, tuple[int, str | None]]:
    """Per collection: (document count, latest indexed_at)."""
    rows = conn.execute(
        "SELECT collection, count(*), max(indexed_at) FROM documents GROUP BY collection"
    )
    return {r[0]: (int(r[1]), r[2]) for r in rows}


def document_ids(conn: Any, collection: str) -> list[int]:
    """Ids of every document in a collection."""
    return [
        r[0] for r in conn.execute("SELECT id FROM documents WHERE collection = ?", (collection,))
    ]


def list_documents(conn: Any, collection: str, prefix: str = "") -> list[Any]:
    """Documents of a collection under a folder prefix, by path."""
    if prefix:
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
        return list(
            conn.execute(
                _DOC
                + " WHERE collection = ? AND (path = ? OR path LIKE ? ESCAPE '\\') ORDER BY path",
                (collection, prefix, like),
            )
        )
    return list(conn.execute(_DOC + " WHERE collection = ? ORDER BY path", (collection,)))


def all_documents(conn: Any, collections: list[str] | None = None) -> list[Any]:
    """Every document (optionally only some collections), by collection and path."""
    if collections:
        marks = ",".join("?" * len(collections))
        return list(
            conn.execute(
                _DOC + f" WHERE collection IN ({marks}) ORDER BY collection, path", collections
            )
        )
    return list(conn.execute(_DOC + " ORDER BY collection, path"))


def document_by_path(conn: Any, collection: str, path: str) -> Any | None:
    """A document by exact collection and relative path."""
    return conn.execute(_DOC + " WHERE collection = ? AND path = ?", (collection, path)).fetchone()


def documents_by_rel_path(conn: Any, path: str) -> list[Any]:
    """Documents with this relative path in any collection (case-insensitive)."""
    return list(conn.execute(_DOC + " WHERE path = ? COLLATE NOCASE", (path,)))


def documents_by_docid(conn: Any, docid: str) -> list[Any]:
    """Documents whose content hash starts with the given docid."""
    like = docid.lower().replace("%", "").replace("_", "") + "%"
    return list(conn.execute(_DOC + " WHERE hash LIKE ? ORDER BY collection, path", (like,)))


def document_by_id(conn: Any, doc_id: int) -> Any | None:
    """A document by its row id."""
    return conn.execute(_DOC + " WHERE id = ?", (doc_id,)).fetchone()


def totals(conn: Any) -> dict[str, int]:
    """Counts of what the index holds."""

    def one(sql: str) -> int:
        return int(conn.execute(sql).fetchone()[0])

    return {
        "documents": one("SELECT count(*) FROM documents"),
        "links": one("SELECT count(*) FROM links"),
        "tags": one("SELECT count(DISTINCT key) FROM tags WHERE key != ''"),
        "contents": one("SELECT count(*) FROM content"),
        "warnings": one("SELECT count(*) FROM documents WHERE warnings != '[]'"),
    }


def file_kinds(conn: Any, no_text: str, limit: int = 20) -> dict[str, Any]:
    """PDFs and canvases indexed, the passages each kind gave, and the PDFs whose warnings
    say `no_text` (no text layer), as collection/path (at most `limit`)."""
    counts = {"pdf": [0, 0], "canvas": [0, 0]}
    rows = conn.execute(
        "SELECT lower(substr(d.path, -4)) = '.pdf', count(DISTINCT d.id), count(c.id)"
        " FROM documents d LEFT JOIN chunks c ON c.doc_hash = d.hash"
        " WHERE lower(d.path) LIKE '%.pdf' OR lower(d.path) LIKE '%.canvas' GROUP BY 1"
    )
    for is_pdf, documents, passages in rows:
        counts["pdf" if is_pdf else "canvas"] = [int(documents), int(passages)]
    scanned = [
        f"{r[0]}/{r[1]}"
        for r in conn.execute(
            "SELECT collection, path FROM documents WHERE lower(path) LIKE '%.pdf'"
            " AND instr(warnings, ?) > 0 ORDER BY collection, path LIMIT ?",
            (json.dumps(no_text)[1:-1], limit),
        )
    ]
    return {"counts": counts, "no_text": scanned}


def documents_with_warnings(conn: Any, limit: int = 20) -> list[Any]:
    """Documents that were indexed with warnings (broken YAML, bad UTF-8)."""
    return list(
        conn.execute(
            "SELECT collection, path, warnings FROM documents WHERE warnings != '[]'"
            " ORDER BY collection, path LIMIT ?",
            (limit,),
        )
    )


def applied_migrations(conn: Any) -> list[str]:
    """Names of applied migrations, in order."""
    return [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]


def quick_check(conn: Any) -> str:
    """SQLite's quick integrity check ("ok" when healthy)."""
    return str(conn.execute("PRAGMA quick_check").fetchone()[0])


def fts_integrity(conn: Any) -> str | None:
    """None when the full-text index matches its content, else the error."""
    try:
        conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('integrity-check')")
    except Exception as exc:
        return str(exc)
    return None


MERGE_PAGES = 2_000  # full-text index pages merged per transaction (8 MB of the WAL)


def merge_fts_segments(db: Any) -> None:
    """Merge the full-text index into one segment, a transaction per MERGE_PAGES pages.

    A large update writes the index as many segments (a commit every half second), and a
    word in most notes is then read from each of them and merged, row by row, at every query
    (12 on the 5,000-note load-test vault: searches 5% slower). FTS5's 'merge' with a negative
    page count works toward one segment; it reports no change once there is nothing left.
    """
    while True:
        with db.write() as conn:
            before = conn.total_changes
            conn.execute(
                "INSERT INTO documents_fts (documents_fts, rank) VALUES ('merge', ?)",
                (-MERGE_PAGES,),
            )
            if conn.total_changes - before < 2:
                return


def vacuum(conn: Any) -> None:
    """Rebuild the file to reclaim space (outside any transaction)."""
    conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('optimize')")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
