"""Queries on documents and what parsing extracted from them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from engram.store.tags import tag_key


@dataclass(frozen=True)
class NoteRecord:
    """One parsed note, flattened into what the tables hold."""

    collection: str
    path: str
    title: str
    hash: str
    mtime_ns: int
    size: int
    body_line: int
    doc_date: str
    frontmatter: dict[str, Any]
    aliases: tuple[str, ...]
    warnings: tuple[str, ...]
    text: str
    fts_headings: str
    fts_props: str
    fts_body: str
    fts_cjk: str
    headings: tuple[tuple[int, str, int], ...]  # (level, text, line)
    links: tuple[tuple[str, str, str | None, str | None, str | None, int, int], ...]
    tags: tuple[tuple[str, int], ...]
    fields: tuple[tuple[str, str, int, str], ...]
    blocks: tuple[tuple[str, int], ...]


class DocState(NamedTuple):
    """What incremental indexing compares for a stored document (a named tuple: every update
    reads one per document)."""

    id: int
    path: str
    hash: str
    mtime_ns: int
    size: int
    title: str


SEQ_KEY = "document_seq"  # meta: the last change number given (never reused, deletes or not)


def _next_seq(conn: Any) -> int:
    row = conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ? RETURNING value",
        (SEQ_KEY,),
    ).fetchone()
    if row is not None:
        return int(row[0])
    first = int(conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM documents").fetchone()[0])
    set_meta(conn, SEQ_KEY, str(first))
    return first


def changed_since(conn: Any, seq: int) -> list[tuple[int, int]]:
    """(id, seq) of the documents stored or touched after change number `seq`, in order."""
    rows = conn.execute("SELECT id, seq FROM documents WHERE seq > ? ORDER BY seq", (seq,))
    return [(r[0], r[1]) for r in rows]


def max_seq(conn: Any) -> int:
    """The latest change number given to a stored document (0: none yet)."""
    return int(get_meta(conn, SEQ_KEY) or 0)


def doc_states(
    conn: Any, collection: str, paths: Iterable[str] | None = None
) -> dict[str, DocState]:
    """The stored documents of a collection (at `paths`, else all), by relative path."""
    among = "" if paths is None else " AND path IN (SELECT value FROM json_each(?))"
    rows = conn.execute(
        "SELECT id, path, hash, mtime_ns, size, title FROM documents WHERE collection = ?" + among,
        (collection,) if paths is None else (collection, json.dumps(sorted(paths))),
    )
    return {r[1]: DocState(*r) for r in rows}


def doc_id(conn: Any, collection: str, path: str) -> int | None:
    """The id of the document at a path of a collection, if any."""
    row = conn.execute(
        "SELECT id FROM documents WHERE collection = ? AND path = ?", (collection, path)
    ).fetchone()
    return None if row is None else int(row[0])


def upsert_note(conn: Any, rec: NoteRecord, now: str) -> tuple[int, bool]:
    """Insert or replace a note (row, content, full-text row, headings, tags...) but not its
    links, which are stored once resolved (store.links.insert_links); return (id, created)."""
    conn.execute("INSERT OR IGNORE INTO content (hash, text) VALUES (?, ?)", (rec.hash, rec.text))
    row = conn.execute(
        "SELECT id FROM documents WHERE collection = ? AND path = ?", (rec.collection, rec.path)
    ).fetchone()
    values = (
        rec.title,
        rec.hash,
        rec.mtime_ns,
        rec.size,
        rec.body_line,
        rec.doc_date,
        json.dumps(rec.frontmatter, ensure_ascii=False),
        json.dumps(list(rec.aliases)),
        json.dumps(list(rec.warnings)),
        now,
    )
    if row is None:
        cur = conn.execute(
            "INSERT INTO documents (title, hash, mtime_ns, size, body_line, doc_date, frontmatter,"
            " aliases, warnings, indexed_at, collection, path, seq)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*values, rec.collection, rec.path, _next_seq(conn)),
        )
        doc_id = int(cur.lastrowid)
    else:
        doc_id = int(row[0])
        conn.execute(
            "UPDATE documents SET title = ?, hash = ?, mtime_ns = ?, size = ?, body_line = ?,"
            " doc_date = ?, frontmatter = ?, aliases = ?, warnings = ?, indexed_at = ?,"
            " language = NULL, seq = ? WHERE id = ?",
            (*values, _next_seq(conn), doc_id),
        )
        _delete_children(conn, doc_id)
    fts_title = "\n".join((rec.title, *rec.aliases))
    conn.execute(
        "INSERT INTO documents_fts (rowid, title, headings, props, body, cjk)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (doc_id, fts_title, rec.fts_headings, rec.fts_props, rec.fts_body, rec.fts_cjk),
    )
    _insert_children(conn, doc_id, rec)
    return doc_id, row is None


def _insert_children(conn: Any, doc_id: int, rec: NoteRecord) -> None:
    if rec.headings:
        conn.executemany(
            "INSERT INTO headings (doc_id, level, text, line) VALUES (?, ?, ?, ?)",
            [(doc_id, *h) for h in rec.headings],
        )
    if rec.tags:
        conn.executemany(
            "INSERT INTO tags (doc_id, tag, key, line) VALUES (?, ?, ?, ?)",
            [(doc_id, tag, tag_key(tag), line) for tag, line in rec.tags],
        )
    if rec.fields:
        conn.executemany(
            "INSERT INTO fields (doc_id, key, value, line, source) VALUES (?, ?, ?, ?, ?)",
            [(doc_id, *f) for f in rec.fields],
        )
    if rec.blocks:
        conn.executemany(
            "INSERT INTO blocks (doc_id, block, line) VALUES (?, ?, ?)",
            [(doc_id, *b) for b in rec.blocks],
        )


def _delete_children(conn: Any, doc_id: int) -> None:
    conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (doc_id,))
    for table in ("headings", "links", "tags", "fields", "blocks"):
        conn.execute(f"DELETE FROM {table} WHERE doc_id = ?", (doc_id,))


def headings_of_content(conn: Any, content_hash: str) -> list[tuple[int, str, int]]:
    """(level, text, line) of the headings of the first document holding this content."""
    rows = conn.execute(
        "SELECT level, text, line FROM headings WHERE doc_id = (SELECT id FROM documents"
        " WHERE hash = ? ORDER BY collection, path LIMIT 1) ORDER BY line, rowid",
        (content_hash,),
    )
    return [(int(r[0]), str(r[1]), int(r[2])) for r in rows]


def touch_document(conn: Any, doc_id: int, mtime_ns: int, size: int, doc_date: str) -> None:
    """Record a new mtime/size (and the date, which may come from it) for a document whose
    content hash did not change."""
    conn.execute(
        "UPDATE documents SET mtime_ns = ?, size = ?, doc_date = ?, seq = ? WHERE id = ?",
        (mtime_ns, size, doc_date, _next_seq(conn), doc_id),
    )


def without_language(conn: Any, limit: int, spread: bool = False) -> list[tuple[int, str]]:
    """(id, text) of documents whose language is not known yet (new or changed since);
    `spread` picks them across the whole table (a fixed pseudo-random order), for a sample."""
    order = " ORDER BY (d.id * 2654435761) % 4294967291" if spread else ""
    return [
        (int(r[0]), str(r[1] or ""))
        for r in conn.execute(
            "SELECT d.id, c.text FROM documents d LEFT JOIN content c ON c.hash = d.hash"
            " WHERE d.language IS NULL" + order + " LIMIT ?",
            (limit,),
        )
    ]


def count_without_language(conn: Any) -> int:
    """How many documents have no language recorded yet."""
    return int(conn.execute("SELECT count(*) FROM documents WHERE language IS NULL").fetchone()[0])


def set_language(conn: Any, doc_id: int, language: str, text: str) -> None:
    """Record a document's language (ISO 639 code, or "und") told from `text`, unless the
    document has one or holds another text by now."""
    conn.execute(
        "UPDATE documents SET language = ? WHERE id = ? AND language IS NULL"
        " AND coalesce((SELECT c.text FROM content c WHERE c.hash = documents.hash), '') = ?",
        (language, doc_id, text),
    )


def languages_of(conn: Any, doc_ids: Sequence[int]) -> dict[int, str]:
    """Recorded language of each of `doc_ids` that has one (ISO 639 code, or "und")."""
    if not doc_ids:
        return {}
    marks = ",".join("?" * len(doc_ids))
    return {
        int(r[0]): str(r[1])
        for r in conn.execute(
            f"SELECT id, language FROM documents WHERE id IN ({marks}) AND language IS NOT NULL",
            tuple(doc_ids),
        )
    }


def language_counts(conn: Any) -> dict[str, int]:
    """Documents per language code ("und": too little prose; "": not looked at yet)."""
    return {
        str(r[0] or ""): int(r[1])
        for r in conn.execute("SELECT language, count(*) FROM documents GROUP BY language")
    }


def rename_document(conn: Any, doc_id: int, path: str) -> None:
    """Give a document a new path (then `upsert_note` stores what the file says there)."""
    conn.execute("UPDATE documents SET path = ? WHERE id = ?", (path, doc_id))


def delete_documents(conn: Any, doc_ids: Iterable[int]) -> int:
    """Remove documents and everything derived from them; return how many. Links to them go
    back to pending: their file may still be there (a note that became binary), and whether
    its heading or block exists is no longer known."""
    count = 0
    for doc_id in doc_ids:
        conn.execute("UPDATE links SET key = NULL WHERE resolved_doc_id = ?", (doc_id,))
        conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (doc_id,))
        conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        count += 1
    return count


def documents_outside(conn: Any, collections: Iterable[str]) -> list[int]:
    """Ids of documents whose collection is no longer configured."""
    names = list(collections)
    marks = ",".join("?" * len(names))
    sql = "SELECT id FROM documents"
    if names:
        sql += f" WHERE collection NOT IN ({marks})"
    return [r[0] for r in conn.execute(sql, names)]


def rename_collection(conn: Any, old: str, new: str) -> int:
    """Move every document of a collection to a new collection name."""
    return int(
        conn.execute(
            "UPDATE documents SET collection = ? WHERE collection = ?", (new, old)
        ).rowcount
    )


def delete_orphan_content(conn: Any) -> int:
    """Drop stored texts no document points to any more (and the PDF text extracted from
    files no document holds: store/extracts.py); the number of texts dropped."""
    from engram.store import extracts

    cur = conn.execute(
        "DELETE FROM content WHERE hash NOT IN (SELECT DISTINCT hash FROM documents)"
    )
    extracts.delete_orphans(conn)
    return int(cur.rowcount)


def get_meta(conn: Any, key: str) -> str | None:
    """A value from the meta table."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: Any, key: str, value: str) -> None:
    """Store a value in the meta table."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def hashes_of(conn: Any, doc_ids: Sequence[int]) -> list[str]:
    """The content hashes of these documents (those still indexed)."""
    out: list[str] = []
    for i in range(0, len(doc_ids), 500):
        part = list(doc_ids[i : i + 500])
        marks = ",".join("?" * len(part))
        out += [
            r[0] for r in conn.execute(f"SELECT hash FROM documents WHERE id IN ({marks})", part)
        ]
    return list(dict.fromkeys(out))
