"""Chunks, the embedding queue and sqlite-vec vectors."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from engram.store.db import sqlite_module
from engram.store.filters import Filters, where

VECTOR_TABLE = "vectors"


@dataclass(frozen=True)
class ChunkRow:
    """A chunk located in its document's text."""

    id: int
    doc_hash: str
    seq: int
    start: int
    end: int
    start_line: int
    end_line: int
    heading: str
    text_hash: str


def bump_generation(conn: Any) -> None:
    """Tell in-memory vector caches that the stored vectors changed."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'vectors_gen'").fetchone()
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('vectors_gen', ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(int(row[0]) + 1 if row else 1),),
    )


def has_vector_table(conn: Any) -> bool:
    """True when the vec0 table exists."""
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (VECTOR_TABLE,)).fetchone()
    return row is not None


def create_vector_table(conn: Any, dim: int) -> None:
    """Create the vec0 table for vectors of `dim` floats (cosine distance)."""
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {VECTOR_TABLE} USING vec0("
        f"embedding float[{int(dim)}] distance_metric=cosine)"
    )


def drop_all(conn: Any) -> None:
    """Forget every chunk and vector (a model switch starts over; vectors never mix)."""
    conn.execute(f"DROP TABLE IF EXISTS {VECTOR_TABLE}")
    for table in ("chunks", "embeddings", "embed_queue", "chunked"):
        conn.execute(f"DELETE FROM {table}")


def hashes_to_chunk(
    conn: Any, collections: Sequence[str] = (), only: Sequence[str] | None = None
) -> list[Any]:
    """Content hashes to chunk, each with the first document that has it (by collection and
    path), whose title the passages carry: (hash, path, collection). A hash is chunked again
    when that title changed (a renamed note whose title is its file name). `only` limits the
    look to these hashes (a write's own notes)."""
    params: list[Any] = []
    among = ""
    if only is not None:
        among = f" WHERE hash IN ({','.join('?' * len(only))})"
        params += list(only)
    sql = (
        "WITH first AS (SELECT hash, path, collection, title, row_number() OVER"
        f" (PARTITION BY hash ORDER BY collection, path) AS n FROM documents{among})"
        " SELECT f.hash, f.path, f.collection FROM first f"
        " LEFT JOIN chunked c ON c.doc_hash = f.hash"
        " WHERE f.n = 1 AND (c.doc_hash IS NULL OR c.title IS NOT f.title)"
    )
    if collections:
        sql += (
            " AND EXISTS (SELECT 1 FROM documents d WHERE d.hash = f.hash"
            f" AND d.collection IN ({','.join('?' * len(collections))}))"
        )
        params += list(collections)
    return list(conn.execute(sql + " ORDER BY f.collection, f.path", params))


def add_chunks(conn: Any, doc_hash: str, title: str, rows: Iterable[tuple[Any, ...]]) -> None:
    """Store a text's chunks, replacing any it had: (seq, start, end, start_line, end_line,
    heading, text_hash, tokens) rows, and mark the text chunked with `title`."""
    conn.execute("DELETE FROM chunks WHERE doc_hash = ?", (doc_hash,))
    conn.executemany(
        "INSERT INTO chunks (doc_hash, seq, start, end, start_line, end_line, heading,"
        " text_hash, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(doc_hash, *r) for r in rows],
    )
    conn.execute(
        "INSERT OR REPLACE INTO chunked (doc_hash, title) VALUES (?, ?)", (doc_hash, title)
    )


def embedded_hashes(conn: Any, text_hashes: Sequence[str]) -> set[str]:
    """Which of these chunk texts already have a vector."""
    out: set[str] = set()
    for i in range(0, len(text_hashes), 500):
        part = list(text_hashes[i : i + 500])
        marks = ",".join("?" * len(part))
        out.update(
            r[0]
            for r in conn.execute(
                f"SELECT text_hash FROM embeddings WHERE text_hash IN ({marks})", part
            )
        )
    return out


def enqueue(conn: Any, items: Iterable[tuple[str, str]]) -> None:
    """Queue (text_hash, text) pairs for embedding."""
    conn.executemany("INSERT OR IGNORE INTO embed_queue (text_hash, text) VALUES (?, ?)", items)


def queue_size(conn: Any) -> int:
    """How many texts wait for a vector."""
    return int(conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0])


def queue_batch(conn: Any, limit: int) -> list[tuple[str, str]]:
    """The next texts to embed."""
    rows = conn.execute("SELECT text_hash, text FROM embed_queue ORDER BY rowid LIMIT ?", (limit,))
    return [(r[0], r[1]) for r in rows]


def queued_of(conn: Any, doc_hashes: Sequence[str], limit: int) -> list[tuple[str, str]]:
    """The texts waiting for a vector among the passages of these contents (at most `limit`)."""
    marks = ",".join("?" * len(doc_hashes))
    rows = conn.execute(
        "SELECT q.text_hash, q.text FROM embed_queue q WHERE q.text_hash IN"
        f" (SELECT text_hash FROM chunks WHERE doc_hash IN ({marks})) ORDER BY q.rowid LIMIT ?",
        (*doc_hashes, limit),
    )
    return [(r[0], r[1]) for r in rows]


def store_vectors(conn: Any, items: Sequence[tuple[str, bytes]], queued_only: bool = False) -> None:
    """Insert vectors for (text_hash, float32 bytes) pairs and take them off the queue;
    `queued_only`: only those still queued (computed outside the transaction, a text may have
    been embedded, or dropped, meanwhile)."""
    for text_hash, blob in items:
        cur = conn.execute("DELETE FROM embed_queue WHERE text_hash = ?", (text_hash,))
        if queued_only and not cur.rowcount:
            continue
        cur = conn.execute(f"INSERT INTO {VECTOR_TABLE} (embedding) VALUES (?)", (blob,))
        conn.execute(
            "INSERT OR REPLACE INTO embeddings (text_hash, vector_id) VALUES (?, ?)",
            (text_hash, cur.lastrowid),
        )


def knn(
    conn: Any, query: bytes, k: int, allowed: Sequence[int] | None = None
) -> list[tuple[int, float]]:
    """The k nearest vectors (vector id, cosine distance), optionally among `allowed` ids.

    The allowed ids travel as one JSON array read by `json_each`: sqlite-vec then restricts
    the scan to them before choosing the k nearest. A literal `rowid IN (?, ...)` list is not
    safe: SQLite rewrites a one-value list into `rowid = ?`, which sqlite-vec 0.1.9 applies
    after the KNN, so a filter leaving a single vector found nothing (and long lists hit
    SQLite's variable limit).
    """
    sql = f"SELECT rowid, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ?"
    params: list[Any] = [query, k]
    if allowed is not None:
        if not allowed:
            return []
        sql += " AND rowid IN (SELECT value FROM json_each(?))"
        params.append(json.dumps([int(v) for v in allowed]))
    return [(int(r[0]), float(r[1])) for r in conn.execute(sql, params)]


def vectors_of_texts(conn: Any, text_hashes: Sequence[str]) -> list[bytes]:
    """The stored vectors of these passage texts."""
    if not text_hashes:
        return []
    marks = ",".join("?" * len(text_hashes))
    ids = [
        r[0]
        for r in conn.execute(
            f"SELECT vector_id FROM embeddings WHERE text_hash IN ({marks})", list(text_hashes)
        )
    ]
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [
        r[0]
        for r in conn.execute(f"SELECT embedding FROM {VECTOR_TABLE} WHERE rowid IN ({marks})", ids)
    ]


def iter_vector_blocks(conn: Any, block: int = 8192) -> Iterator[tuple[Any, Any]]:
    """Every stored vector as (int64 ids, float32 matrix) blocks, so an in-memory index never
    holds all of them as Python bytes at once.

    Read from sqlite-vec's own storage (one blob of 1,024 vectors per row) when its layout is
    the one this code knows, checked on the first vector against sqlite-vec's answer: asked
    row by row, sqlite-vec opens a vector's whole blob for each one (0.27 s for 7,684 vectors
    against 0.023 s, and over a minute at 500,000 on a busy machine)."""
    if _chunk_layout_matches(conn):
        yield from _chunk_blocks(conn)
        return
    import numpy as np

    cur = conn.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE}")
    while rows := cur.fetchmany(block):
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        yield ids, mat.reshape(len(rows), -1)


_CHUNKS = f"{VECTOR_TABLE}_chunks"
_CHUNK_VECTORS = f"{VECTOR_TABLE}_vector_chunks00"


def _chunk_blocks(conn: Any) -> Iterator[tuple[Any, Any]]:
    """(ids, vectors) of each sqlite-vec chunk: its valid slots only (deleted ones are off in
    the validity bitmap)."""
    import numpy as np

    # one blob at a time: a join sorted by chunk would hold every blob in SQLite's sorter
    chunks = conn.execute(f"SELECT chunk_id, size, validity, rowids FROM {_CHUNKS}").fetchall()
    for chunk_id, size, validity, rowids in chunks:
        row = conn.execute(
            f"SELECT vectors FROM {_CHUNK_VECTORS} WHERE rowid = ?", (chunk_id,)
        ).fetchone()
        if row is None:  # written meanwhile: the layout check found every blob
            continue
        blob = row[0]
        valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[:size]
        keep = valid.astype(bool)
        if keep.any():
            mat = np.frombuffer(blob, dtype=np.float32).reshape(size, -1)
            yield np.frombuffer(rowids, dtype=np.int64)[:size][keep], mat[keep]


def _chunk_layout_matches(conn: Any) -> bool:
    """True when sqlite-vec's chunk tables hold float32 vectors where this code reads them:
    the first valid vector read from the chunk equals sqlite-vec's own row."""
    try:
        first = next(_chunk_blocks(conn), None)
    except (sqlite_module().DatabaseError, ValueError):  # no such table/column, odd sizes
        return False
    if first is None:
        return conn.execute(f"SELECT 1 FROM {VECTOR_TABLE} LIMIT 1").fetchone() is None
    ids, mat = first
    row = conn.execute(
        f"SELECT embedding FROM {VECTOR_TABLE} WHERE rowid = ?", (int(ids[0]),)
    ).fetchone()
    missing = conn.execute(  # every chunk has its blob (else some vectors would be skipped)
        f"SELECT 1 FROM {_CHUNKS} c WHERE NOT EXISTS"
        f" (SELECT 1 FROM {_CHUNK_VECTORS} v WHERE v.rowid = c.chunk_id) LIMIT 1"
    ).fetchone()
    return row is not None and bytes(row[0]) == mat[0].tobytes() and missing is None


def has_vectors(conn: Any) -> bool:
    """True when at least one vector is stored (without counting them: a count reads the
    whole table, a third of a second at 500,000 vectors on a busy machine)."""
    if not has_vector_table(conn):
        return False
    return conn.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is not None


def vector_count(conn: Any) -> int:
    """How many vectors are stored."""
    if not has_vector_table(conn):
        return 0
    return int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def allowed_vectors(conn: Any, filters: Filters) -> list[int]:
    """Vector ids of chunks in documents that pass the filters."""
    where_sql, params = where(filters)
    rows = conn.execute(
        "SELECT DISTINCT e.vector_id FROM documents d JOIN chunks c ON c.doc_hash = d.hash"
        f" JOIN embeddings e ON e.text_hash = c.text_hash WHERE 1 = 1{where_sql}",
        params,
    )
    return [int(r[0]) for r in rows]


def chunks_for_vectors(conn: Any, vector_ids: Sequence[int]) -> list[tuple[int, ChunkRow]]:
    """(vector id, chunk) for every chunk whose text has one of these vectors."""
    if not vector_ids:
        return []
    marks = ",".join("?" * len(vector_ids))
    rows = conn.execute(
        "SELECT e.vector_id, c.id, c.doc_hash, c.seq, c.start, c.end, c.start_line, c.end_line,"
        " c.heading, c.text_hash FROM embeddings e JOIN chunks c ON c.text_hash = e.text_hash"
        f" WHERE e.vector_id IN ({marks})",
        list(vector_ids),
    )
    return [(int(r[0]), ChunkRow(*r[1:])) for r in rows]


def documents_for_hashes(conn: Any, hashes: Sequence[str], filters: Filters) -> list[Any]:
    """Documents with these content hashes that pass the filters."""
    if not hashes:
        return []
    where_sql, params = where(filters)
    marks = ",".join("?" * len(hashes))
    return list(
        conn.execute(
            "SELECT d.id, d.collection, d.path, d.title, d.hash, d.body_line,"
            " json_extract(d.frontmatter, '$.factType') FROM documents d"
            f" WHERE d.hash IN ({marks}){where_sql}",
            [*hashes, *params],
        )
    )


def chunks_of(conn: Any, doc_hash: str) -> list[ChunkRow]:
    """A document's chunks in order."""
    rows = conn.execute(
        "SELECT id, doc_hash, seq, start, end, start_line, end_line, heading, text_hash"
        " FROM chunks WHERE doc_hash = ? ORDER BY seq",
        (doc_hash,),
    )
    return [ChunkRow(*r) for r in rows]


def coverage(conn: Any) -> dict[str, int]:
    """Counts for status: documents chunked, chunks, chunks with a vector, texts queued, and
    documents not fully embedded (not chunked yet, or a passage without a vector).

    Read from `embed_totals`, which triggers keep in the transaction of every write
    (migration m022): counting afresh joins every passage to its vector, 3.4 s at 500,000.
    """
    row = conn.execute(
        "SELECT chunks, embedded, documents_chunked, queued, documents_not_embedded"
        " FROM embed_totals"
    ).fetchone()
    keys = ("chunks", "embedded", "documentsChunked", "queued", "documentsNotEmbedded")
    return dict(zip(keys, (int(v) for v in row), strict=True))


def counted_coverage(conn: Any) -> dict[str, int]:
    """The counts of `coverage`, counted afresh from the tables (what the kept ones must
    equal; the tests compare them)."""

    def one(sql: str) -> int:
        return int(conn.execute(sql).fetchone()[0])

    return {
        "chunks": one("SELECT count(*) FROM chunks c JOIN documents d ON d.hash = c.doc_hash"),
        "embedded": one(
            "SELECT count(*) FROM chunks c JOIN documents d ON d.hash = c.doc_hash"
            " JOIN embeddings e ON e.text_hash = c.text_hash"
        ),
        "documentsChunked": one(
            "SELECT count(*) FROM documents d WHERE EXISTS"
            " (SELECT 1 FROM chunked c WHERE c.doc_hash = d.hash)"
        ),
        "queued": one("SELECT count(*) FROM embed_queue"),
        "documentsNotEmbedded": one(
            "SELECT count(*) FROM documents d"
            " WHERE NOT EXISTS (SELECT 1 FROM chunked c WHERE c.doc_hash = d.hash)"
            " OR EXISTS (SELECT 1 FROM chunks c WHERE c.doc_hash = d.hash AND NOT EXISTS"
            " (SELECT 1 FROM embeddings e WHERE e.text_hash = c.text_hash))"
        ),
    }


def is_chunked(conn: Any, doc_hash: str) -> bool:
    """True when a content has been cut into passages (an empty one into none)."""
    row = conn.execute("SELECT 1 FROM chunked WHERE doc_hash = ?", (doc_hash,)).fetchone()
    return row is not None


def delete_orphans(conn: Any) -> int:
    """Drop chunks of contents no document has, and vectors no chunk uses; return vectors freed."""
    conn.execute("DELETE FROM chunks WHERE doc_hash NOT IN (SELECT hash FROM documents)")
    conn.execute("DELETE FROM chunked WHERE doc_hash NOT IN (SELECT hash FROM documents)")
    conn.execute("DELETE FROM embed_queue WHERE text_hash NOT IN (SELECT text_hash FROM chunks)")
    stale = [
        r[0]
        for r in conn.execute(
            "SELECT vector_id FROM embeddings WHERE text_hash NOT IN (SELECT text_hash FROM chunks)"
        )
    ]
    if stale and has_vector_table(conn):
        conn.executemany(f"DELETE FROM {VECTOR_TABLE} WHERE rowid = ?", [(v,) for v in stale])
    conn.execute("DELETE FROM embeddings WHERE text_hash NOT IN (SELECT text_hash FROM chunks)")
    return len(stale)
