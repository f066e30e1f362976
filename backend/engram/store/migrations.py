"""Append-only schema migrations, recorded by name in the `_migrations` table.

An applied migration is never edited: add a new function at the end of MIGRATIONS instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any


def m001_documents(conn: Any) -> None:
    """Documents, content by hash, full-text index, and what parsing extracts."""
    _script(
        conn,
        """
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            collection TEXT NOT NULL,
            path TEXT NOT NULL,
            title TEXT NOT NULL,
            hash TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            body_line INTEGER NOT NULL DEFAULT 1,
            doc_date TEXT NOT NULL DEFAULT '',
            frontmatter TEXT NOT NULL DEFAULT '{}',
            aliases TEXT NOT NULL DEFAULT '[]',
            warnings TEXT NOT NULL DEFAULT '[]',
            indexed_at TEXT NOT NULL,
            UNIQUE (collection, path)
        );
        CREATE INDEX documents_hash ON documents (hash);
        CREATE INDEX documents_date ON documents (doc_date);
        CREATE TABLE content (
            hash TEXT PRIMARY KEY,
            text TEXT NOT NULL
        );
        CREATE VIRTUAL TABLE documents_fts USING fts5 (
            title, headings, props, body, cjk,
            tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TABLE headings (
            doc_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            level INTEGER NOT NULL,
            text TEXT NOT NULL,
            line INTEGER NOT NULL
        );
        CREATE INDEX headings_doc ON headings (doc_id);
        CREATE TABLE links (
            id INTEGER PRIMARY KEY,
            doc_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            target TEXT NOT NULL,
            heading TEXT,
            block TEXT,
            display TEXT,
            embed INTEGER NOT NULL DEFAULT 0,
            line INTEGER NOT NULL
        );
        CREATE INDEX links_doc ON links (doc_id);
        CREATE INDEX links_target ON links (target COLLATE NOCASE);
        CREATE TABLE tags (
            doc_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            line INTEGER NOT NULL
        );
        CREATE INDEX tags_doc ON tags (doc_id);
        CREATE INDEX tags_tag ON tags (tag COLLATE NOCASE);
        CREATE TABLE fields (
            doc_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            line INTEGER NOT NULL,
            source TEXT NOT NULL
        );
        CREATE INDEX fields_doc ON fields (doc_id);
        CREATE INDEX fields_kv ON fields (key COLLATE NOCASE, value COLLATE NOCASE);
        CREATE TABLE blocks (
            doc_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            block TEXT NOT NULL,
            line INTEGER NOT NULL
        );
        CREATE INDEX blocks_doc ON blocks (doc_id);
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    )


def m004_facts(conn: Any) -> None:
    """Facts: what memory needs from fact notes (rebuilt from them) plus access counts."""
    _script(
        conn,
        """
        CREATE TABLE facts (
            id TEXT PRIMARY KEY,
            doc_id INTEGER NOT NULL UNIQUE REFERENCES documents (id) ON DELETE CASCADE,
            fact_type TEXT NOT NULL,
            lifecycle TEXT NOT NULL,
            importance REAL NOT NULL,
            confidence REAL NOT NULL,
            scope TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            superseded_by TEXT,
            last_edited_by TEXT NOT NULL,
            written_hash TEXT
        );
        CREATE INDEX facts_type ON facts (fact_type);
        CREATE INDEX facts_created ON facts (created_at);
        CREATE TABLE fact_access (
            id TEXT PRIMARY KEY,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_access TEXT
        );
        """,
    )


def _script(conn: Any, sql: str) -> None:
    """Run DDL statements one by one (executescript would commit the open transaction)."""
    for statement in sql.split(";\n"):
        if statement.strip():
            conn.execute(statement)


MIGRATIONS: list[Callable[[Any], None]] = [m001_documents, m004_facts]


def apply(conn: Any) -> list[str]:
    """Apply every migration not yet recorded; return the names applied now."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied = []
    for migration in MIGRATIONS:
        if migration.__name__ in done:
            continue
        migration(conn)
        conn.execute(
            "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
            (migration.__name__, dt.datetime.now(dt.UTC).isoformat(timespec="seconds")),
        )
        applied.append(migration.__name__)
    return applied
