"""Reads that describe what the index derived from a collection's files, by path rather than
by row id, so two indexes of the same folder can be compared (index/verify.py)."""

from __future__ import annotations

from typing import Any

Row = tuple[Any, ...]

_IN_COLLECTION = " FROM documents d JOIN {t} t ON t.doc_id = d.id WHERE d.collection = ?"


def documents(conn: Any, collection: str) -> list[Row]:
    """(path, title, hash, mtime_ns, size, body_line, doc_date, frontmatter, aliases, warnings)."""
    return _rows(
        conn,
        "SELECT path, title, hash, mtime_ns, size, body_line, doc_date, frontmatter, aliases,"
        " warnings FROM documents WHERE collection = ?",
        collection,
    )


def fts(conn: Any, collection: str) -> list[Row]:
    """Each document's full-text row: (path, title, headings, props, body, cjk); a document
    without one is listed with None columns."""
    return _rows(
        conn,
        "SELECT d.path, f.title, f.headings, f.props, f.body, f.cjk FROM documents d"
        " LEFT JOIN documents_fts f ON f.rowid = d.id WHERE d.collection = ?",
        collection,
    )


def fts_orphans(conn: Any) -> int:
    """Full-text rows of no document (any collection)."""
    row = conn.execute(
        "SELECT count(*) FROM documents_fts WHERE rowid NOT IN (SELECT id FROM documents)"
    )
    return int(row.fetchone()[0])


def headings(conn: Any, collection: str) -> list[Row]:
    """(path, level, text, line) of every heading."""
    return _rows(conn, "SELECT d.path, t.level, t.text, t.line" + _on("headings"), collection)


def tags(conn: Any, collection: str) -> list[Row]:
    """(path, tag, key, line) of every tag."""
    return _rows(conn, "SELECT d.path, t.tag, t.key, t.line" + _on("tags"), collection)


def fields(conn: Any, collection: str) -> list[Row]:
    """(path, key, value, line, source) of every field."""
    return _rows(
        conn, "SELECT d.path, t.key, t.value, t.line, t.source" + _on("fields"), collection
    )


def blocks(conn: Any, collection: str) -> list[Row]:
    """(path, block, line) of every block id."""
    return _rows(conn, "SELECT d.path, t.block, t.line" + _on("blocks"), collection)


def links(conn: Any, collection: str) -> list[Row]:
    """Every link with its resolution, the resolved note named by its path: (source, kind,
    target, heading, block, display, embed, line, key, resolved_path, resolved note's path,
    heading_ok, block_ok)."""
    return _rows(
        conn,
        "SELECT d.path, t.kind, t.target, t.heading, t.block, t.display, t.embed, t.line, t.key,"
        " t.resolved_path, r.path, t.heading_ok, t.block_ok"
        " FROM documents d JOIN links t ON t.doc_id = d.id"
        " LEFT JOIN documents r ON r.id = t.resolved_doc_id WHERE d.collection = ?",
        collection,
    )


def vault_files(conn: Any, collection: str) -> list[Row]:
    """(path, key) of every file listed for the collection's folder."""
    return _rows(conn, "SELECT path, key FROM vault_files WHERE collection = ?", collection)


def facts(conn: Any, collection: str) -> list[Row]:
    """The fact rows of the collection's notes, by fact id and note path."""
    return _rows(
        conn,
        "SELECT t.id, d.path, t.fact_type, t.lifecycle, t.importance, t.confidence, t.scope,"
        " t.created_at, t.updated_at, t.superseded_by, t.last_edited_by"
        " FROM documents d JOIN facts t ON t.doc_id = d.id WHERE d.collection = ?",
        collection,
    )


def chunks(conn: Any, collection: str) -> list[Row]:
    """The chunks of the collection's notes' texts, each with whether its text has a vector
    (`embedded`), waits for one (`queued`) or neither (`missing`); a text not chunked yet
    is one row (hash, None...)."""
    return _rows(
        conn,
        "SELECT h.hash, c.seq, c.start, c.end, c.start_line, c.end_line, c.heading, c.text_hash,"
        " c.tokens, CASE WHEN c.id IS NULL THEN NULL"
        "  WHEN EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash = c.text_hash)"
        "  THEN 'embedded'"
        "  WHEN EXISTS (SELECT 1 FROM embed_queue q WHERE q.text_hash = c.text_hash)"
        "  THEN 'queued' ELSE 'missing' END"
        " FROM (SELECT DISTINCT hash FROM documents WHERE collection = ?) h"
        " LEFT JOIN chunked k ON k.doc_hash = h.hash"
        " LEFT JOIN chunks c ON c.doc_hash = k.doc_hash",
        collection,
    )


def misattributed(conn: Any, collection: str) -> int:
    """Resolved links whose note id is not the note at their resolved path (none or another)."""
    row = conn.execute(
        "SELECT count(*) FROM documents d JOIN links l ON l.doc_id = d.id"
        " LEFT JOIN documents t ON t.collection = d.collection AND t.path = l.resolved_path"
        " WHERE d.collection = ? AND l.key IS NOT NULL AND l.resolved_doc_id IS NOT t.id",
        (collection,),
    )
    return int(row.fetchone()[0])


def _on(table: str) -> str:
    return _IN_COLLECTION.format(t=table)


def _rows(conn: Any, sql: str, collection: str) -> list[Row]:
    return [tuple(r) for r in conn.execute(sql, (collection,))]
