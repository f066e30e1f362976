"""The embedding driver: chunk what is new, embed what has no vector, in resumable batches.

Chunks belong to a content hash, and vectors to a chunk text hash, so an unchanged note is
never re-chunked, an edited note re-embeds only the sections whose text changed, and identical
passages share one vector. The index records the model id and dimension: another model starts
over (vectors from two models are never mixed). Work is committed batch by batch and the queue
of texts to embed lives in the index, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from engram.codec import Seconds, arg
from engram.index import turns
from engram.index.chunk import Chunk, chunk_note
from engram.index.chunk_pages import chunk_pages
from engram.index.loader import ParsePool, parse_text
from engram.models.protocols import Embedder
from engram.store import documents as docs
from engram.store import vectors
from engram.store.db import Database
from engram.store.search import content_text
from engram.vault.kinds import is_canvas, is_pdf

# Passages per embedding call: a write waits for at most the call in progress (~0.35 s on two
# quiet cores). A passage of ~256 tokens is a decode of its own whatever the call's size, and
# bigger calls gained nothing measurable (64 against 16: +5%, within noise).
EMBED_BATCH = 4
CHUNK_COMMIT_SECONDS = 0.5
# New vectors reach searches at least this often during a long embed. Not after every batch:
# a search process reloads its in-memory vectors when the generation changes, and reloading
# after each batch made every search during an embed pay that reload.
VISIBLE_SECONDS = 5.0
# A write embeds at most this many of its own passages before it returns (a few seconds of
# work); a note longer than that has the rest embedded by the next `embed` or index job.
WRITE_PASSAGES = 128

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass
class EmbedReport:
    """What one `embed` run did."""

    model_id: str = arg("", wire="model")
    dim: int = 0
    reset: bool = False  # vectors of another model were dropped
    documents_chunked: int = 0
    chunks: int = 0
    embedded: int = 0
    seconds: Seconds = 0.0

    def summary(self) -> str:
        """One line for humans."""
        rate = self.embedded / self.seconds if self.seconds else 0.0
        return (
            f"{self.documents_chunked} documents chunked ({self.chunks} chunks), "
            f"{self.embedded} passages embedded in {self.seconds:.1f}s ({rate:.1f}/s) "
            f"with {self.model_id}" + (" (previous model's vectors dropped)" if self.reset else "")
        )


def prepare(db: Database, embedder: Embedder, force: bool = False) -> bool:
    """Make the index hold vectors of this embedder only; True when it had to start over."""
    with db.write() as conn:
        model = docs.get_meta(conn, "embed_model")
        dim = docs.get_meta(conn, "embed_dim")
        same = model == embedder.model_id and dim == str(embedder.dim)
        if same and not force and vectors.has_vector_table(conn):
            return False
        vectors.drop_all(conn)
        vectors.create_vector_table(conn, embedder.dim)
        docs.set_meta(conn, "embed_model", embedder.model_id)
        docs.set_meta(conn, "embed_dim", str(embedder.dim))
        vectors.bump_generation(conn)
        return model is not None


def embed(
    db: Database,
    embedder: Embedder,
    collections: Sequence[str] = (),
    force: bool = False,
    progress: Progress | None = None,
    pool: ParsePool | None = None,
) -> EmbedReport:
    """Chunk new contents and embed every queued passage; safe to interrupt and re-run.
    New and changed notes get their language recorded first (cheap beside embedding)."""
    from engram.index import languages

    started = time.perf_counter()
    languages.backfill(db, progress)
    report = chunk(db, embedder, collections, force, progress, pool)
    _embed_pass(db, embedder, report, progress)
    report.seconds = time.perf_counter() - started
    return report


def chunk(
    db: Database,
    embedder: Embedder,
    collections: Sequence[str] = (),
    force: bool = False,
    progress: Progress | None = None,
    pool: ParsePool | None = None,
) -> EmbedReport:
    """Chunk new contents and queue the passages that have no vector, embedding none (`engram
    rebuild` re-chunks this way); vectors no passage uses any more are dropped."""
    report = EmbedReport(model_id=embedder.model_id, dim=embedder.dim)
    report.reset = prepare(db, embedder, force)
    todo = vectors.hashes_to_chunk(db.conn, collections)
    if pool is None:
        with ParsePool() as own:  # started only if a big note needs it
            _chunk_pass(db, embedder, todo, report, progress, own)
    else:
        _chunk_pass(db, embedder, todo, report, progress, pool)
    with db.write() as conn:  # after chunking, so vectors of unchanged passages are kept
        if vectors.delete_orphans(conn):
            vectors.bump_generation(conn)
    return report


def embed_written(
    db: Database, embedder: Embedder, doc_hashes: Sequence[str], pool: ParsePool
) -> int:
    """Chunk these contents and embed their passages that have no vector (up to
    WRITE_PASSAGES), so notes a write just stored are found by meaning when it returns; the
    number embedded. An index without vectors, or with another model's, is left to `embed`
    (switching models re-embeds everything: never a side effect of a write)."""
    conn = db.conn
    same = docs.get_meta(conn, "embed_model") == embedder.model_id and docs.get_meta(
        conn, "embed_dim"
    ) == str(embedder.dim)
    if not doc_hashes or not same or not vectors.has_vector_table(conn):
        return 0
    report = EmbedReport(model_id=embedder.model_id, dim=embedder.dim)
    _chunk_pass(db, embedder, vectors.hashes_to_chunk(conn, only=doc_hashes), report, None, pool)
    todo = vectors.queued_of(conn, doc_hashes, WRITE_PASSAGES)
    for i in range(0, len(todo), EMBED_BATCH):
        batch = todo[i : i + EMBED_BATCH]
        matrix = np.asarray(embedder.embed_documents([t for _, t in batch]), dtype=np.float32)
        with db.write() as conn:
            vectors.store_vectors(
                conn,
                [(h, row.tobytes()) for (h, _), row in zip(batch, matrix, strict=True)],
                queued_only=True,
            )
    if todo:
        with db.write() as conn:
            vectors.bump_generation(conn)
    return len(todo)


def _chunk_pass(
    db: Database,
    embedder: Embedder,
    todo: list[Any],
    report: EmbedReport,
    progress: Progress | None,
    pool: ParsePool,
) -> None:
    """Cut each content into passages and queue those without a vector. The cutting (parse,
    tokens) is done outside any transaction, and in the daemon away from the writers' turn
    (turns.py); a content a write chunked meanwhile, or one no document has any more, is
    skipped when the passages are stored."""
    done = 0
    while done < len(todo):
        group, _ = turns.away(partial(_cut_group, db, embedder, todo[done:], pool))
        with db.write() as conn:
            still = {
                (r[0], r[1], r[2])
                for r in vectors.hashes_to_chunk(conn, only=[g[0] for g in group])
            }
            for doc_hash, path, collection, title, chunks in group:
                if (doc_hash, path, collection) in still:
                    _store_chunks(conn, doc_hash, title, chunks)
                    report.documents_chunked += 1
                    report.chunks += len(chunks)
        done += len(group)
        if progress:
            progress("chunking", done, len(todo))


def _cut_group(
    db: Database, embedder: Embedder, todo: list[Any], pool: ParsePool
) -> list[tuple[str, str, str, str, list[Chunk]]]:
    """(hash, path, collection, title, chunks) of the first contents of `todo`: those cut
    within CHUNK_COMMIT_SECONDS (one at least)."""
    started = time.perf_counter()
    conn = db.conn
    out = []
    for doc_hash, path, collection in todo:
        text = content_text(conn, doc_hash) or ""
        title, chunks = _chunks(conn, embedder, doc_hash, path, text, pool)
        out.append((doc_hash, path, collection, title, chunks))
        if time.perf_counter() - started > CHUNK_COMMIT_SECONDS:
            break
    return out


def _store_chunks(conn: Any, doc_hash: str, title: str, chunks: list[Chunk]) -> None:
    have = vectors.embedded_hashes(conn, [c.text_hash for c in chunks])
    vectors.enqueue(conn, [(c.text_hash, c.embed_text) for c in chunks if c.text_hash not in have])
    vectors.add_chunks(
        conn,
        doc_hash,
        title,
        [
            (
                c.seq,
                c.start,
                c.end,
                c.start_line,
                c.end_line,
                " > ".join(c.heading_path),
                c.text_hash,
                c.token_count,
            )
            for c in chunks
        ],
    )


def _chunks(
    conn: Any, embedder: Embedder, doc_hash: str, path: str, text: str, pool: ParsePool
) -> tuple[str, list[Chunk]]:
    """(title, chunks) of a stored text: a PDF page by page with its outline's headings; a
    canvas as the markdown it reads as, titled by its file name (as its document is)."""
    count, limit = embedder.count_tokens, embedder.max_text_tokens
    if is_pdf(path):
        title = PurePosixPath(path).stem
        outline = docs.headings_of_content(conn, doc_hash)
        return title, chunk_pages(text, title, outline, count, limit)
    parsed = parse_text(text, path, pool)
    if is_canvas(path):
        parsed = replace(parsed, title=PurePosixPath(path).stem)
    return parsed.title, chunk_note(text, parsed, count, limit)


def _embed_pass(
    db: Database, embedder: Embedder, report: EmbedReport, progress: Progress | None
) -> None:
    total = vectors.queue_size(db.conn)
    shown = time.perf_counter()
    unseen = False  # vectors stored since the generation was last bumped
    try:
        while True:
            batch = vectors.queue_batch(db.conn, EMBED_BATCH)
            if not batch:
                break
            texts = [text for _, text in batch]
            # computed away from the writers' turn (turns.py); a text a write embedded
            # meanwhile is no longer queued, and its vector is not stored twice
            matrix, _ = turns.away(partial(_vectors, embedder, texts))
            with db.write() as conn:
                vectors.store_vectors(
                    conn,
                    [(h, row.tobytes()) for (h, _), row in zip(batch, matrix, strict=True)],
                    queued_only=True,
                )
                unseen = time.perf_counter() - shown < VISIBLE_SECONDS
                if not unseen:
                    vectors.bump_generation(conn)
                    shown = time.perf_counter()
            report.embedded += len(batch)
            if progress:
                progress("embedding", report.embedded, total)
    finally:  # a cancelled run still shows what it stored
        if unseen:
            with db.write() as conn:
                vectors.bump_generation(conn)


def _vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return np.asarray(embedder.embed_documents(texts), dtype=np.float32)
