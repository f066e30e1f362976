"""Vector retrieval: nearest chunks, grouped into documents (best chunk first).

A one-off query (the CLI) asks sqlite-vec directly. A process that searches repeatedly (the
daemon, a benchmark) keeps every vector in memory as float16 after its second query (half of
float32: 500,000 MiniLM vectors take 384 MB) and scores them all with one SIMD pass (simsimd),
several times faster than sqlite-vec's scan. float16 keeps about three significant digits;
recall@10 against exact float32 search is in docs/benchmarks.md. The vectors are read again,
block by block, when the stored ones change (a generation counter in the index).

Why not int8 with the best candidates rescored from sqlite-vec: int8 scans four times faster,
but sqlite-vec reads one vector by rowid in ~0.4 ms (it opens the 1.5 MB blob of 1,024
vectors it sits in), so rescoring the 150-500 candidates a search needs would cost more than
the whole float16 scan.
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
RESCORE_MARGIN = 16  # candidates beyond 2k scored again in float32


@dataclass(frozen=True)
class VectorHit:
    """A document found by meaning: its row, best similarity and matching chunks."""

    doc: Any  # documents row: id, collection, path, title, hash, body_line, factType
    score: float  # cosine similarity of the best chunk, clamped to 0..1
    chunks: tuple[tuple[vectors.ChunkRow, float], ...] = field(default=())


@dataclass(frozen=True)
class Matrix:
    """Every stored vector in float16: row i is vector `ids[i]`."""

    ids: np.ndarray  # int64 vector ids
    rows: np.ndarray  # float16, one row per vector


class VectorIndex:
    """Nearest-neighbour search over the stored vectors of one index."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queries = 0
        self._gen: str | None = None
        self._matrix: Matrix | None = None

    @property
    def matrix(self) -> Matrix | None:
        """The in-memory float16 vectors, once a second query built them."""
        return self._matrix

    def count(self, conn: Any) -> int:
        """How many vectors are stored: the in-memory ones while they are current (counting
        the table on every query cost more than the scan at 500,000 vectors)."""
        with self._lock:
            if self._matrix is not None and docs.get_meta(conn, "vectors_gen") == self._gen:
                return len(self._matrix.ids)
        return vectors.vector_count(conn)

    def nearest(
        self, conn: Any, query: np.ndarray, k: int, allowed: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """(vector id, cosine similarity) of the k nearest vectors, best first (ties by id)."""
        with self._lock:
            self._queries += 1
            matrix = self._warm_matrix(conn) if self._queries >= 2 else None
        query = np.asarray(query, dtype=np.float32)
        if matrix is None:
            found = vectors.knn(conn, query.tobytes(), k, allowed)
            return [(vid, 1.0 - dist) for vid, dist in found]
        sims = similarities(matrix.rows, query)
        ids = matrix.ids
        if allowed is not None:
            keep = np.isin(ids, np.asarray(allowed, dtype=np.int64))
            ids, sims = ids[keep], sims[keep]
        rows = matrix.rows if allowed is None else matrix.rows[keep]
        k = min(k, len(ids))
        if k <= 0:
            return []
        # simsimd's float16 kernels may also add in float16 (AVX512-FP16 CPUs): errors up to
        # ~2e-4, enough to swap near neighbours. The best few are scored again in float32.
        wide = min(len(ids), 2 * k + RESCORE_MARGIN)
        top = np.argpartition(-sims, wide - 1)[:wide]
        exact = rows[top].astype(np.float32) @ query
        order = np.lexsort((ids[top], -exact))[:k]
        return [(int(ids[top[i]]), float(exact[i])) for i in order]

    def _warm_matrix(self, conn: Any) -> Matrix | None:
        gen = docs.get_meta(conn, "vectors_gen")
        if self._matrix is not None and gen == self._gen:
            return self._matrix
        count = vectors.vector_count(conn)
        if count < MATRIX_MIN_VECTORS:
            return None
        self._matrix = None  # let the old vectors go before the new ones are read
        matrix = _read_matrix(conn, count)
        if matrix is None:
            return None
        self._matrix, self._gen = matrix, gen
        return self._matrix


def _read_matrix(conn: Any, count: int) -> Matrix | None:
    """Every stored vector, written block by block into one float16 matrix allocated for
    `count` (grown if more were stored meanwhile): gathering blocks then joining them left the
    freed blocks in the process's heap, 540 MB more resident memory at 500,000 vectors."""
    ids = np.empty(count, dtype=np.int64)
    rows: np.ndarray | None = None
    at = 0
    for block_ids, mat in vectors.iter_vector_blocks(conn):
        end = at + len(block_ids)
        if rows is None:
            rows = np.empty((max(count, end), mat.shape[1]), dtype=np.float16)
        if end > len(rows):
            ids = np.concatenate([ids, np.empty(end - len(ids), dtype=np.int64)])
            rows = np.vstack([rows, np.empty((end - len(rows), rows.shape[1]), np.float16)])
        ids[at:end] = block_ids
        rows[at:end] = mat
        at = end
    if rows is None or at == 0:
        return None
    return Matrix(ids[:at], rows[:at])


def similarities(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Dot products of float16 rows with a query, accumulated in float32 by simsimd's SIMD
    kernels (numpy has no float16 product: converting the rows first took 1.2 s on 500,000)."""
    import simsimd

    if len(rows) == 0:
        return np.zeros(0, dtype=np.float64)
    q = query.astype(np.float16)[None, :]
    return np.asarray(simsimd.cdist(q, rows, metric="dot"), dtype=np.float64)[0]


def search(
    conn: Any,
    index: VectorIndex,
    query: np.ndarray,
    filters: Filters,
    n: int | None,
    per_doc: int = 3,
) -> list[VectorHit]:
    """The n documents whose chunks are nearest the query (all when n is None)."""
    # a filter that leaves a few notes out is checked on the nearest passages (_group): listing
    # every other vector first would cost more than the search
    allowed = vectors.allowed_vectors(conn, filters) if filters.narrows() else None
    total = index.count(conn) if allowed is None else len(allowed)
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
