"""Vector retrieval: nearest chunks, grouped into documents (best chunk first).

A one-off query (the CLI) asks sqlite-vec directly. A process that searches repeatedly (the
daemon, a benchmark) keeps every vector in one numpy matrix after its second query: a
matrix-vector product is several times faster than sqlite-vec's scan on large indexes. The
matrix is rebuilt when the stored vectors change (a generation counter in the index).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engram.store import documents as docs
from engram.store import vectors
from engram.store.filters import Filters

MATRIX_MIN_VECTORS = 2_000  # below this sqlite-vec is already fast
_blas_limited = False


def _one_blas_thread() -> None:
    """Keep numpy's BLAS on one thread in this process. A matrix-vector product over tens of
    thousands of vectors gains nothing from more, and BLAS worker threads that keep spinning
    after it took the cores from llama.cpp's next query embedding: on 2 cores that made
    vsearch's p95 four times its median."""
    global _blas_limited
    if not _blas_limited:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")
        _blas_limited = True


@dataclass(frozen=True)
class VectorHit:
    """A document found by meaning: its row, best similarity and matching chunks."""

    doc: Any  # documents row: id, collection, path, title, hash, body_line, factType
    score: float  # cosine similarity of the best chunk, clamped to 0..1
    chunks: tuple[tuple[vectors.ChunkRow, float], ...] = field(default=())


class VectorIndex:
    """Nearest-neighbour search over the stored vectors of one index."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queries = 0
        self._gen: str | None = None
        self._ids: np.ndarray | None = None
        self._matrix: np.ndarray | None = None

    def nearest(
        self, conn: Any, query: np.ndarray, k: int, allowed: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """(vector id, cosine similarity) of the k nearest vectors, best first."""
        with self._lock:
            self._queries += 1
            matrix = self._warm_matrix(conn) if self._queries >= 2 else None
        if matrix is None:
            found = vectors.knn(conn, query.astype(np.float32).tobytes(), k, allowed)
            return [(vid, 1.0 - dist) for vid, dist in found]
        ids, mat = matrix
        if allowed is not None:
            keep = np.isin(ids, np.asarray(allowed, dtype=np.int64))
            ids, mat = ids[keep], mat[keep]
        if len(ids) == 0:
            return []
        sims = mat @ query.astype(np.float32)
        k = min(k, len(ids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(ids[i]), float(sims[i])) for i in top]

    def _warm_matrix(self, conn: Any) -> tuple[np.ndarray, np.ndarray] | None:
        gen = docs.get_meta(conn, "vectors_gen")
        if self._matrix is not None and gen == self._gen and self._ids is not None:
            return self._ids, self._matrix
        if vectors.vector_count(conn) < MATRIX_MIN_VECTORS:
            return None
        _one_blas_thread()
        rows = vectors.all_vectors(conn)
        self._ids = np.fromiter((vid for vid, _ in rows), dtype=np.int64, count=len(rows))
        dim = len(rows[0][1]) // 4
        self._matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(
            len(rows), dim
        )
        self._gen = gen
        return self._ids, self._matrix


def search(
    conn: Any,
    index: VectorIndex,
    query: np.ndarray,
    filters: Filters,
    n: int | None,
    per_doc: int = 3,
) -> list[VectorHit]:
    """The n documents whose chunks are nearest the query (all when n is None)."""
    allowed = None if filters.is_empty() else vectors.allowed_vectors(conn, filters)
    total = vectors.vector_count(conn) if allowed is None else len(allowed)
    want = total if n is None else n
    k = min(total, max(50, want * 5))
    while True:
        nearest = index.nearest(conn, query, k, allowed) if k else []
        hits = _group(conn, nearest, filters, per_doc)
        if len(hits) >= want or k >= total:
            return hits[:want]
        k = min(total, k * 4)


def _group(
    conn: Any, nearest: list[tuple[int, float]], filters: Filters, per_doc: int
) -> list[VectorHit]:
    sim = dict(nearest)
    by_hash: dict[str, list[tuple[vectors.ChunkRow, float]]] = {}
    for vid, chunk in vectors.chunks_for_vectors(conn, [vid for vid, _ in nearest]):
        by_hash.setdefault(chunk.doc_hash, []).append((chunk, sim[vid]))
    hits = []
    for doc in vectors.documents_for_hashes(conn, list(by_hash), filters):
        ranked = sorted(by_hash[doc[4]], key=lambda cs: (-cs[1], cs[0].seq))[:per_doc]
        hits.append(VectorHit(doc, max(0.0, min(1.0, ranked[0][1])), tuple(ranked)))
    hits.sort(key=lambda h: (-h.score, h.doc[1], h.doc[2]))
    return hits
