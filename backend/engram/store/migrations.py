"""Append-only schema migrations, recorded by name in the `_migrations` table.

An applied migration is never edited (nor the SQL constant a long one keeps beside it): add a
new function at the end of MIGRATIONS instead.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

M001_SQL = """
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
        """


def m001_documents(conn: Any) -> None:
    """Documents, content by hash, full-text index, and what parsing extracts."""
    _script(conn, M001_SQL)


def _script(conn: Any, sql: str) -> None:
    """Run DDL statements one by one (executescript would commit the open transaction)."""
    for statement in sql.split(";\n"):
        if statement.strip():
            conn.execute(statement)


def m002_chunks(conn: Any) -> None:
    """Chunks of each document content (by hash), embedded texts, and the embedding queue.

    Vectors live in a sqlite-vec `vectors` table created when the model's dimension is known
    (store/vectors.py); `embeddings` maps a chunk text hash to its vector, so identical
    passages are embedded once.
    """
    _script(
        conn,
        """
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            doc_hash TEXT NOT NULL,
            seq INTEGER NOT NULL,
            start INTEGER NOT NULL,
            end INTEGER NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            text_hash TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            UNIQUE (doc_hash, seq)
        );
        CREATE INDEX chunks_text_hash ON chunks (text_hash);
        CREATE TABLE embeddings (
            text_hash TEXT PRIMARY KEY,
            vector_id INTEGER NOT NULL
        );
        CREATE INDEX embeddings_vector ON embeddings (vector_id);
        CREATE TABLE embed_queue (
            text_hash TEXT PRIMARY KEY,
            text TEXT NOT NULL
        );
        CREATE TABLE chunked (
            doc_hash TEXT PRIMARY KEY
        );
        """,
    )


def m003_link_resolution(conn: Any) -> None:
    """Where each link points (file, indexed note, heading/block found) and the vault's files.

    `links.key` is the target's lookup key (vault.resolve.link_key); NULL marks a link not yet
    resolved, so links stored before this migration are resolved by the next update.
    `vault_files` lists every file of a collection's folder (notes and attachments alike):
    Obsidian resolves links against all of them, not only the indexed ones.
    """
    _script(
        conn,
        """
        ALTER TABLE links ADD COLUMN key TEXT;
        ALTER TABLE links ADD COLUMN resolved_path TEXT;
        ALTER TABLE links ADD COLUMN resolved_doc_id INTEGER
            REFERENCES documents (id) ON DELETE SET NULL;
        ALTER TABLE links ADD COLUMN heading_ok INTEGER;
        ALTER TABLE links ADD COLUMN block_ok INTEGER;
        CREATE INDEX links_key ON links (key);
        CREATE INDEX links_resolved_doc ON links (resolved_doc_id);
        CREATE TABLE vault_files (
            collection TEXT NOT NULL,
            path TEXT NOT NULL,
            key TEXT NOT NULL,
            PRIMARY KEY (collection, path)
        ) WITHOUT ROWID;
        CREATE INDEX vault_files_key ON vault_files (collection, key);
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


def m005_llm_cache(conn: Any) -> None:
    """Model outputs worth keeping: query expansions and rerank scores, by model + input."""
    _script(
        conn,
        """
        CREATE TABLE llm_cache (
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (datetime('now')),
            PRIMARY KEY (kind, key)
        );
        """,
    )


def m006_drop_links_target_index(conn: Any) -> None:
    """Links are looked up by resolution key and resolved document since m003; the index on
    the raw target only slowed every insert."""
    conn.execute("DROP INDEX IF EXISTS links_target")


M007_SQL = """
        CREATE TABLE sync_state (
            fact_id TEXT PRIMARY KEY,
            vault TEXT NOT NULL,
            version INTEGER NOT NULL,
            synced_hash TEXT NOT NULL,
            base TEXT NOT NULL,
            path TEXT,
            deleted INTEGER NOT NULL DEFAULT 0,
            synced_at TEXT NOT NULL
        );
        CREATE TABLE sync_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            vault TEXT NOT NULL,
            fact_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('upsert', 'delete')),
            op_id TEXT NOT NULL UNIQUE,
            payload TEXT,
            hash TEXT,
            created_at TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            parked INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX sync_outbox_fact ON sync_outbox (fact_id, seq);
        CREATE INDEX sync_outbox_vault ON sync_outbox (vault, parked, seq);
        CREATE TABLE sync_meta (
            vault TEXT PRIMARY KEY,
            cursor TEXT,
            last_sync TEXT,
            last_error TEXT
        );
        CREATE TABLE sync_conflicts (
            id INTEGER PRIMARY KEY,
            vault TEXT NOT NULL,
            fact_id TEXT NOT NULL,
            path TEXT NOT NULL,
            copy TEXT NOT NULL,
            fields TEXT NOT NULL,
            at TEXT NOT NULL
        );
        """
# one statement with a `;` inside its body: not through _script's split
M007_TRIGGER = """
        CREATE TRIGGER sync_fact_deleted AFTER DELETE ON facts
        WHEN EXISTS (SELECT 1 FROM sync_state s WHERE s.fact_id = OLD.id AND s.deleted = 0)
          OR EXISTS (SELECT 1 FROM sync_outbox o WHERE o.fact_id = OLD.id AND o.parked = 0)
        BEGIN
            INSERT INTO sync_outbox (vault, fact_id, kind, op_id, created_at)
            SELECT vault, OLD.id, 'delete', lower(hex(randomblob(16))),
                   strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
            FROM (SELECT vault FROM sync_state WHERE fact_id = OLD.id
                  UNION ALL SELECT vault FROM sync_outbox WHERE fact_id = OLD.id)
            LIMIT 1;
        END
        """


def m007_sync(conn: Any) -> None:
    """Convex sync bookkeeping: what was last agreed per fact, the outbox, the pull cursor
    and conflicts. A fact that synced, or has a write queued, queues a delete when its row
    disappears (its note deleted), in the same transaction, whatever deleted it."""
    _script(conn, M007_SQL)
    conn.execute(M007_TRIGGER)


def m008_fact_written(conn: Any) -> None:
    """The hash Engram last wrote to each fact note, by fact id. No note can say it (it tells a
    person's edit from Engram's own write), so it leaves the derived `facts` table for one of
    its own, as access counts did, and `engram rebuild` carries it over."""
    _script(
        conn,
        """
        CREATE TABLE fact_written (
            id TEXT PRIMARY KEY,
            sha256 TEXT NOT NULL
        );
        INSERT INTO fact_written (id, sha256)
            SELECT id, written_hash FROM facts WHERE written_hash IS NOT NULL;
        ALTER TABLE facts DROP COLUMN written_hash
        """,
    )


def m009_chunked_title(conn: Any) -> None:
    """The title a text was chunked with: passages carry the note's title, which may come
    from the file name, so a renamed note is chunked again (NULL: chunked before this)."""
    conn.execute("ALTER TABLE chunked ADD COLUMN title TEXT")


def m010_document_seq(conn: Any) -> None:
    """A change number per document, raised each time the indexer stores or touches it: what
    derives from documents outside the indexer's transaction (fact rows) keeps a cursor in it,
    so an update interrupted before that step is caught up by the next one."""
    _script(
        conn,
        """
        ALTER TABLE documents ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX documents_seq ON documents (seq);
        """,
    )


def m011_document_language(conn: Any) -> None:
    """Each note's dominant language (ISO 639 code, "und" when too little prose), so status
    can say when the embedding model does not serve a share of the vault. NULL until looked
    at (index/languages.py: `embed` fills it in; storing a changed note clears it)."""
    _script(conn, "ALTER TABLE documents ADD COLUMN language TEXT;")


def m012_recall_log(conn: Any) -> None:
    """Recalls made per vault, UTC day and agent: daily notes and weekly reflections show who
    recalled how much, and counting in the index means a recall never writes a note."""
    _script(
        conn,
        """
        CREATE TABLE recall_log (
            collection TEXT NOT NULL,
            day TEXT NOT NULL,
            agent TEXT NOT NULL,
            recalls INTEGER NOT NULL,
            PRIMARY KEY (collection, day, agent)
        ) WITHOUT ROWID
        """,
    )


def m013_folded_forms(conn: Any) -> None:
    """Recompute the `cjk` column, which now also cuts Thai, Lao, Khmer and Myanmar into
    bigrams and holds folded spellings (store/fts.py), for notes indexed before."""
    from engram.store.fts import cjk_column

    rows = conn.execute(
        "SELECT f.rowid, d.title, f.body FROM documents_fts f JOIN documents d ON d.id = f.rowid"
    ).fetchall()
    for rowid, title, body in rows:
        if not (title or "").isascii() or not (body or "").isascii():
            conn.execute(
                "UPDATE documents_fts SET cjk = ? WHERE rowid = ?",
                (cjk_column(title or "", body or ""), rowid),
            )


def m014_rechunk(conn: Any) -> None:
    """Chunk every text again on the next embed: a passage no longer repeats the heading its
    prefix already names (index/chunk.py). Unchanged passages keep their vectors (by text
    hash); the others are queued."""
    conn.execute("DELETE FROM chunked")


M015_SQL = """
        CREATE VIRTUAL TABLE documents_fts_m015 USING fts5 (
            title, headings, props, body, cjk,
            tokenize = 'porter unicode61 remove_diacritics 2',
            prefix = '1 2 3'
        );
        INSERT INTO documents_fts_m015 (rowid, title, headings, props, body, cjk)
            SELECT rowid, title, headings, props, body, cjk FROM documents_fts;
        DROP TABLE documents_fts;
        ALTER TABLE documents_fts_m015 RENAME TO documents_fts
        """


def m015_prefix_index(conn: Any) -> None:
    """The full-text index again, now with prefix indexes of 1 to 3 characters: without them
    FTS5 answers `bac*` by merging the lists of every word starting so, once to count, once
    to rank and once per snippet (124 ms on the 5,000-note load-test vault, the tail of its
    p99; `b*` 376 ms to rank alone, 31 ms with them). Longer prefixes match few enough words
    to merge. One transaction: a crash leaves the old table. It reads and
    indexes all the text again (93 s for 100,000 notes here), so a large index says so."""
    notes = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    if notes >= 10_000:
        logging.getLogger(__name__).warning(
            "upgrading the index: the full text of %d notes is indexed again with prefix"
            " indexes, once (about 1 s per 1,000 notes)",
            notes,
        )
    _script(conn, M015_SQL)


def m016_sync_rejected(conn: Any) -> None:
    """Remote changes sync could not apply (an id that cannot be a file name, a field of the
    wrong type), kept with why so `sync status` shows them while the pull moves past; and
    why the last pull stopped before Convex said it was done."""
    _script(
        conn,
        """
        CREATE TABLE sync_rejected (
            id INTEGER PRIMARY KEY,
            vault TEXT NOT NULL,
            external_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            record TEXT NOT NULL,
            digest TEXT NOT NULL,
            at TEXT NOT NULL,
            UNIQUE (vault, digest)
        );
        CREATE INDEX sync_rejected_fact ON sync_rejected (vault, external_id);
        ALTER TABLE sync_meta ADD COLUMN stopped TEXT
        """,
    )


def m017_fact_followups(conn: Any) -> None:
    """What is still to be done after a fact note's own write (index it, its ledger line, its
    daily note), recorded before the write and cleared after: a process killed in between,
    or a follow-up that failed, leaves the row for the next process to finish."""
    _script(
        conn,
        """
        CREATE TABLE fact_followups (
            fact_id TEXT PRIMARY KEY,
            collection TEXT NOT NULL,
            paths TEXT NOT NULL DEFAULT '[]',
            sha256 TEXT,
            pid INTEGER,
            since TEXT NOT NULL
        ) WITHOUT ROWID
        """,
    )


def m018_tag_keys(conn: Any) -> None:
    """Each tag's key, the form it is matched and counted by (store/tags.py): `#Tag`, `#TAG`
    and `#tag` are one tag, as in Obsidian, whose spelling stays for display. The index
    on the spelling, which only that case-insensitive match used, goes."""
    from engram.store.tags import tag_key

    conn.execute("ALTER TABLE tags ADD COLUMN key TEXT NOT NULL DEFAULT ''")
    rows = conn.execute("SELECT rowid, tag FROM tags").fetchall()
    conn.executemany("UPDATE tags SET key = ? WHERE rowid = ?", [(tag_key(t), r) for r, t in rows])
    conn.execute("DROP INDEX IF EXISTS tags_tag")


def m019_extracts(conn: Any) -> None:
    """Text extracted from PDFs, by the sha256 of the file's bytes and the extractor that made
    it: an unchanged PDF (touched, renamed, copied, or indexed again by `engram rebuild`,
    which keeps this table) is never read by PDFium again."""
    _script(
        conn,
        """
        CREATE TABLE extracts (
            hash TEXT NOT NULL,
            extractor TEXT NOT NULL,
            pages TEXT NOT NULL,
            outline TEXT NOT NULL DEFAULT '[]',
            page_count INTEGER NOT NULL,
            meta TEXT NOT NULL DEFAULT '[]',
            warnings TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (hash, extractor)
        )
        """,
    )


M020_SQL = """
CREATE TABLE graph_dirty (
    collection TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    n INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (collection, kind, key)
) WITHOUT ROWID

CREATE TABLE graph_tag_names (
    collection TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (collection, key)
) WITHOUT ROWID

CREATE INDEX tags_key ON tags (key)

CREATE TRIGGER graph_doc_added AFTER INSERT ON documents BEGIN
    INSERT INTO graph_dirty (collection, kind, key) VALUES (NEW.collection, 'p', NEW.path)
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_doc_changed
AFTER UPDATE OF path, title, hash, frontmatter, collection ON documents BEGIN
    INSERT INTO graph_dirty (collection, kind, key) VALUES (OLD.collection, 'p', OLD.path)
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key) VALUES (NEW.collection, 'p', NEW.path)
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_doc_removed BEFORE DELETE ON documents BEGIN
    INSERT INTO graph_dirty (collection, kind, key) VALUES (OLD.collection, 'p', OLD.path)
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT OLD.collection, 'f', id FROM facts WHERE doc_id = OLD.id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT OLD.collection, 't', key FROM tags WHERE doc_id = OLD.id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_link_resolved AFTER UPDATE OF resolved_doc_id, resolved_path ON links
WHEN OLD.resolved_doc_id IS NOT NEW.resolved_doc_id
    OR OLD.resolved_path IS NOT NEW.resolved_path BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_tag_added AFTER INSERT ON tags BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 't', NEW.key FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_tag_removed AFTER DELETE ON tags BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 't', OLD.key FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_fact_added AFTER INSERT ON facts BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'f', NEW.id FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_fact_changed AFTER UPDATE OF id, doc_id, fact_type ON facts BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'f', OLD.id FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'f', NEW.id FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_fact_removed AFTER DELETE ON facts BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'f', OLD.id FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END
"""


def m020_graph_dirty(conn: Any) -> None:
    """What changed since each vault's graph index file was written, marked by triggers in the
    transaction that changes it: a note's path (added, edited, renamed, removed, a link of it
    resolving elsewhere, its fact row changing), a fact's id (the notes citing it by
    `supersedes`... change too) and a tag's key (its name may change with the votes).
    The file is then rewritten part by part (service/graph_files.py); `n` counts marks, so
    one made during a rewrite outlives it. `graph_tag_names` holds the tag names the file
    shows, and `tags_key` serves the names of the tags a change reaches."""
    for statement in M020_SQL.strip().split("\n\n"):
        conn.execute(statement)


M021_SQL = """
DROP TRIGGER graph_doc_added

DROP TRIGGER graph_doc_changed

DROP TRIGGER graph_doc_removed

DROP TRIGGER graph_link_resolved

DROP TRIGGER graph_tag_added

DROP TRIGGER graph_tag_removed

DROP TRIGGER graph_fact_added

DROP TRIGGER graph_fact_changed

DROP TRIGGER graph_fact_removed

DELETE FROM graph_dirty

CREATE TABLE graph_files (collection TEXT PRIMARY KEY) WITHOUT ROWID

CREATE TRIGGER graph_doc_added AFTER INSERT ON documents
WHEN EXISTS (SELECT 1 FROM graph_files WHERE collection = NEW.collection) BEGIN
    INSERT INTO graph_dirty (collection, kind, key) VALUES (NEW.collection, 'p', NEW.path)
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_doc_changed
AFTER UPDATE OF path, title, hash, frontmatter, collection ON documents
WHEN EXISTS (SELECT 1 FROM graph_files WHERE collection = OLD.collection)
    OR EXISTS (SELECT 1 FROM graph_files WHERE collection = NEW.collection) BEGIN
    INSERT INTO graph_dirty (collection, kind, key) VALUES (OLD.collection, 'p', OLD.path)
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key) VALUES (NEW.collection, 'p', NEW.path)
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT NEW.collection, 't', key FROM tags WHERE doc_id = NEW.id AND OLD.path IS NOT NEW.path
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_doc_removed BEFORE DELETE ON documents
WHEN EXISTS (SELECT 1 FROM graph_files WHERE collection = OLD.collection) BEGIN
    INSERT INTO graph_dirty (collection, kind, key) VALUES (OLD.collection, 'p', OLD.path)
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT OLD.collection, 'f', id FROM facts WHERE doc_id = OLD.id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT OLD.collection, 't', key FROM tags WHERE doc_id = OLD.id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_link_resolved AFTER UPDATE OF resolved_doc_id, resolved_path ON links
WHEN (OLD.resolved_doc_id IS NOT NEW.resolved_doc_id
    OR OLD.resolved_path IS NOT NEW.resolved_path)
    AND EXISTS (SELECT 1 FROM documents d JOIN graph_files USING (collection)
    WHERE d.id = NEW.doc_id) BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_tag_added AFTER INSERT ON tags
WHEN EXISTS (SELECT 1 FROM documents d JOIN graph_files USING (collection)
    WHERE d.id = NEW.doc_id) BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, '+', NEW.key || char(31) || NEW.doc_id
        || char(31) || NEW.line || char(31) || NEW.tag
    FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_tag_removed AFTER DELETE ON tags
WHEN EXISTS (SELECT 1 FROM documents d JOIN graph_files USING (collection)
    WHERE d.id = OLD.doc_id) BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, '-', OLD.key || char(31) || OLD.doc_id
        || char(31) || OLD.line || char(31) || OLD.tag
    FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_fact_added AFTER INSERT ON facts
WHEN EXISTS (SELECT 1 FROM documents d JOIN graph_files USING (collection)
    WHERE d.id = NEW.doc_id) BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'f', NEW.id FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_fact_changed AFTER UPDATE OF id, doc_id, fact_type ON facts
WHEN EXISTS (SELECT 1 FROM documents d JOIN graph_files USING (collection)
    WHERE d.id = OLD.doc_id)
    OR EXISTS (SELECT 1 FROM documents d JOIN graph_files USING (collection)
    WHERE d.id = NEW.doc_id) BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'f', OLD.id FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'f', NEW.id FROM documents WHERE id = NEW.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END

CREATE TRIGGER graph_fact_removed AFTER DELETE ON facts
WHEN EXISTS (SELECT 1 FROM documents d JOIN graph_files USING (collection)
    WHERE d.id = OLD.doc_id) BEGIN
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'p', path FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO graph_dirty (collection, kind, key)
    SELECT collection, 'f', OLD.id FROM documents WHERE id = OLD.doc_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END
"""


def m021_graph_files(conn: Any) -> None:
    """Marks only for the collections whose graph file is written (`graph_files`): a new
    vault's first index is written whole anyway, and marking each of its rows cost 7-16% of
    a cold index. A tag row now marks `+` when inserted and `-` when deleted, keyed by tag,
    note, line and spelling, so an edited note's unchanged tags (deleted and inserted again)
    cancel out instead of recounting how the vault spells them (1.5 s for a tag on half of
    100,000 notes); a `t` mark (a key) still asks for a recount: a note deleted or moved."""
    for statement in M021_SQL.strip().split("\n\n"):
        conn.execute(statement)


M022_TABLES = """
CREATE TABLE embed_counts (
    hash TEXT PRIMARY KEY,
    docs INTEGER NOT NULL DEFAULT 0,
    chunks INTEGER NOT NULL DEFAULT 0,
    embedded INTEGER NOT NULL DEFAULT 0,
    chunked INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID

CREATE TABLE embed_totals (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    chunks INTEGER NOT NULL,
    embedded INTEGER NOT NULL,
    documents_chunked INTEGER NOT NULL,
    documents_not_embedded INTEGER NOT NULL,
    queued INTEGER NOT NULL
)

CREATE TABLE embed_replacing (
    tbl TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    PRIMARY KEY (tbl, text_hash)
) WITHOUT ROWID

INSERT INTO embed_totals VALUES (0, 0, 0, 0, 0, (SELECT count(*) FROM embed_queue))

CREATE TRIGGER embed_counts_added AFTER INSERT ON embed_counts WHEN NEW.docs > 0 BEGIN
    UPDATE embed_totals SET
        chunks = chunks + NEW.docs * NEW.chunks,
        embedded = embedded + NEW.docs * NEW.embedded,
        documents_chunked = documents_chunked + NEW.docs * NEW.chunked,
        documents_not_embedded = documents_not_embedded
            + NEW.docs * (NEW.chunked = 0 OR NEW.embedded < NEW.chunks);
END

CREATE TRIGGER embed_counts_changed AFTER UPDATE ON embed_counts
WHEN OLD.docs > 0 OR NEW.docs > 0 BEGIN
    UPDATE embed_totals SET
        chunks = chunks + NEW.docs * NEW.chunks - OLD.docs * OLD.chunks,
        embedded = embedded + NEW.docs * NEW.embedded - OLD.docs * OLD.embedded,
        documents_chunked = documents_chunked + NEW.docs * NEW.chunked - OLD.docs * OLD.chunked,
        documents_not_embedded = documents_not_embedded
            + NEW.docs * (NEW.chunked = 0 OR NEW.embedded < NEW.chunks)
            - OLD.docs * (OLD.chunked = 0 OR OLD.embedded < OLD.chunks);
END

CREATE TRIGGER embed_counts_removed AFTER DELETE ON embed_counts WHEN OLD.docs > 0 BEGIN
    UPDATE embed_totals SET
        chunks = chunks - OLD.docs * OLD.chunks,
        embedded = embedded - OLD.docs * OLD.embedded,
        documents_chunked = documents_chunked - OLD.docs * OLD.chunked,
        documents_not_embedded = documents_not_embedded
            - OLD.docs * (OLD.chunked = 0 OR OLD.embedded < OLD.chunks);
END

INSERT INTO embed_counts (hash, docs, chunks, embedded, chunked)
SELECT hash, sum(docs), sum(chunks), sum(embedded), max(chunked) FROM (
    SELECT hash, count(*) AS docs, 0 AS chunks, 0 AS embedded, 0 AS chunked
    FROM documents GROUP BY hash
    UNION ALL
    SELECT c.doc_hash, 0, count(*), count(e.text_hash), 0
    FROM chunks c LEFT JOIN embeddings e ON e.text_hash = c.text_hash GROUP BY c.doc_hash
    UNION ALL
    SELECT doc_hash, 0, 0, 0, 1 FROM chunked
) GROUP BY hash
"""

# the rows of a content hash that no longer counts anything go
_M022_GONE = """
    DELETE FROM embed_counts
    WHERE hash = {h} AND docs = 0 AND chunks = 0 AND chunked = 0"""
# passages of every content that holds the text `t`, as it gains or loses its vector
_M022_TEXT = """
    UPDATE embed_counts SET embedded = embedded {op} (SELECT count(*) FROM chunks c
        WHERE c.text_hash = {t} AND c.doc_hash = embed_counts.hash)
    WHERE hash IN (SELECT doc_hash FROM chunks WHERE text_hash = {t}){unless}"""
_M022_UNLESS = """
    AND NOT EXISTS (SELECT 1 FROM embed_replacing WHERE tbl = '{tbl}' AND text_hash = {t})"""

M022_TRIGGERS = (
    """
CREATE TRIGGER embed_counts_doc_added AFTER INSERT ON documents BEGIN
    INSERT INTO embed_counts (hash, docs) VALUES (NEW.hash, 1)
    ON CONFLICT (hash) DO UPDATE SET docs = docs + 1;
END

CREATE TRIGGER embed_counts_doc_removed AFTER DELETE ON documents BEGIN
    UPDATE embed_counts SET docs = docs - 1 WHERE hash = OLD.hash;"""
    + _M022_GONE.format(h="OLD.hash")
    + """;
END

CREATE TRIGGER embed_counts_doc_changed AFTER UPDATE OF hash ON documents
WHEN OLD.hash IS NOT NEW.hash BEGIN
    UPDATE embed_counts SET docs = docs - 1 WHERE hash = OLD.hash;
    INSERT INTO embed_counts (hash, docs) VALUES (NEW.hash, 1)
    ON CONFLICT (hash) DO UPDATE SET docs = docs + 1;"""
    + _M022_GONE.format(h="OLD.hash")
    + """;
END

CREATE TRIGGER embed_counts_chunk_added AFTER INSERT ON chunks BEGIN
    INSERT INTO embed_counts (hash, chunks, embedded) VALUES (NEW.doc_hash, 1,
        EXISTS (SELECT 1 FROM embeddings WHERE text_hash = NEW.text_hash))
    ON CONFLICT (hash) DO UPDATE SET
        chunks = chunks + 1, embedded = embedded + excluded.embedded;
END

CREATE TRIGGER embed_counts_chunk_removed AFTER DELETE ON chunks BEGIN
    UPDATE embed_counts SET chunks = chunks - 1,
        embedded = embedded - EXISTS (SELECT 1 FROM embeddings WHERE text_hash = OLD.text_hash)
    WHERE hash = OLD.doc_hash;"""
    + _M022_GONE.format(h="OLD.doc_hash")
    + """;
END

CREATE TRIGGER embed_counts_chunk_changed AFTER UPDATE OF doc_hash, text_hash ON chunks
WHEN OLD.doc_hash IS NOT NEW.doc_hash OR OLD.text_hash IS NOT NEW.text_hash BEGIN
    UPDATE embed_counts SET chunks = chunks - 1,
        embedded = embedded - EXISTS (SELECT 1 FROM embeddings WHERE text_hash = OLD.text_hash)
    WHERE hash = OLD.doc_hash;
    INSERT INTO embed_counts (hash, chunks, embedded) VALUES (NEW.doc_hash, 1,
        EXISTS (SELECT 1 FROM embeddings WHERE text_hash = NEW.text_hash))
    ON CONFLICT (hash) DO UPDATE SET
        chunks = chunks + 1, embedded = embedded + excluded.embedded;"""
    + _M022_GONE.format(h="OLD.doc_hash")
    + """;
END

CREATE TRIGGER embed_counts_chunked_added AFTER INSERT ON chunked BEGIN
    INSERT INTO embed_counts (hash, chunked) VALUES (NEW.doc_hash, 1)
    ON CONFLICT (hash) DO UPDATE SET chunked = 1;
END

CREATE TRIGGER embed_counts_chunked_removed AFTER DELETE ON chunked BEGIN
    UPDATE embed_counts SET chunked = 0 WHERE hash = OLD.doc_hash;"""
    + _M022_GONE.format(h="OLD.doc_hash")
    + """;
END

CREATE TRIGGER embed_counts_chunked_changed AFTER UPDATE OF doc_hash ON chunked
WHEN OLD.doc_hash IS NOT NEW.doc_hash BEGIN
    UPDATE embed_counts SET chunked = 0 WHERE hash = OLD.doc_hash;
    INSERT INTO embed_counts (hash, chunked) VALUES (NEW.doc_hash, 1)
    ON CONFLICT (hash) DO UPDATE SET chunked = 1;"""
    + _M022_GONE.format(h="OLD.doc_hash")
    + """;
END

CREATE TRIGGER embed_counts_vector_replacing BEFORE INSERT ON embeddings
WHEN EXISTS (SELECT 1 FROM embeddings WHERE text_hash = NEW.text_hash) BEGIN
    INSERT OR IGNORE INTO embed_replacing (tbl, text_hash) VALUES ('embeddings', NEW.text_hash);
END

CREATE TRIGGER embed_counts_vector_added AFTER INSERT ON embeddings BEGIN"""
    + _M022_TEXT.format(
        op="+", t="NEW.text_hash", unless=_M022_UNLESS.format(tbl="embeddings", t="NEW.text_hash")
    )
    + """;
    DELETE FROM embed_replacing WHERE tbl = 'embeddings' AND text_hash = NEW.text_hash;
END

CREATE TRIGGER embed_counts_vector_removed AFTER DELETE ON embeddings BEGIN"""
    + _M022_TEXT.format(op="-", t="OLD.text_hash", unless="")
    + """;
    DELETE FROM embed_replacing WHERE tbl = 'embeddings' AND text_hash = OLD.text_hash;
END

CREATE TRIGGER embed_counts_vector_moving BEFORE UPDATE OF text_hash ON embeddings
WHEN OLD.text_hash IS NOT NEW.text_hash
    AND EXISTS (SELECT 1 FROM embeddings WHERE text_hash = NEW.text_hash) BEGIN
    INSERT OR IGNORE INTO embed_replacing (tbl, text_hash) VALUES ('embeddings', NEW.text_hash);
END

CREATE TRIGGER embed_counts_vector_moved AFTER UPDATE OF text_hash ON embeddings
WHEN OLD.text_hash IS NOT NEW.text_hash BEGIN"""
    + _M022_TEXT.format(op="-", t="OLD.text_hash", unless="")
    + ";"
    + _M022_TEXT.format(
        op="+", t="NEW.text_hash", unless=_M022_UNLESS.format(tbl="embeddings", t="NEW.text_hash")
    )
    + """;
    DELETE FROM embed_replacing
    WHERE tbl = 'embeddings' AND text_hash IN (OLD.text_hash, NEW.text_hash);
END

CREATE TRIGGER embed_counts_queue_replacing BEFORE INSERT ON embed_queue
WHEN EXISTS (SELECT 1 FROM embed_queue WHERE text_hash = NEW.text_hash) BEGIN
    INSERT OR IGNORE INTO embed_replacing (tbl, text_hash) VALUES ('embed_queue', NEW.text_hash);
END

CREATE TRIGGER embed_counts_queued AFTER INSERT ON embed_queue BEGIN
    UPDATE embed_totals SET queued = queued + 1
    WHERE NOT EXISTS (SELECT 1 FROM embed_replacing
        WHERE tbl = 'embed_queue' AND text_hash = NEW.text_hash);
    DELETE FROM embed_replacing WHERE tbl = 'embed_queue' AND text_hash = NEW.text_hash;
END

CREATE TRIGGER embed_counts_unqueued AFTER DELETE ON embed_queue BEGIN
    UPDATE embed_totals SET queued = queued - 1;
    DELETE FROM embed_replacing WHERE tbl = 'embed_queue' AND text_hash = OLD.text_hash;
END
"""
)


def m022_embed_counts(conn: Any) -> None:
    """Status's embedding counts kept as passages are chunked, embedded and dropped, instead
    of counted per status (3.4 s at 500,000 passages): `embed_counts` holds, per content hash,
    its documents, passages, passages with a vector and whether it is chunked; `embed_totals`
    sums each row's share (its counts times its documents), kept by triggers on
    `embed_counts`, which triggers on documents, chunks, chunked, embeddings and embed_queue
    keep. Every writer is counted, whatever its statement: an INSERT OR REPLACE of a vector
    or a queued text (the old row leaves without a delete trigger) is told apart from a new
    one by `embed_replacing`, which a BEFORE trigger fills only when the key is taken. A
    REPLACE of a document or a passage row is not (the graph triggers assume none either)."""
    for statement in (M022_TABLES + M022_TRIGGERS).strip().split("\n\n"):
        conn.execute(statement)


MIGRATIONS: list[Callable[[Any], None]] = [
    m001_documents,
    m002_chunks,
    m003_link_resolution,
    m004_facts,
    m005_llm_cache,
    m006_drop_links_target_index,
    m007_sync,
    m008_fact_written,
    m009_chunked_title,
    m010_document_seq,
    m011_document_language,
    m012_recall_log,
    m013_folded_forms,
    m014_rechunk,
    m015_prefix_index,
    m016_sync_rejected,
    m017_fact_followups,
    m018_tag_keys,
    m019_extracts,
    m020_graph_dirty,
    m021_graph_files,
    m022_embed_counts,
]


def pending(conn: Any) -> bool:
    """True when some migration is not applied yet (read-only: opening an index that is up to
    date takes no write lock, so it never waits behind a writer)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'"
    ).fetchone()
    if row is None:
        return True
    done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
    return any(m.__name__ not in done for m in MIGRATIONS)


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
