"""The warm vector index (float16 vectors in memory) finds what exact float32 search finds."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram.search.vector import MATRIX_MIN_VECTORS, VectorIndex
from engram.store import documents as docs
from engram.store import vectors
from engram.store.db import Database

DIM = 384
COUNT = MATRIX_MIN_VECTORS + 500  # enough for the in-memory path


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Database, np.ndarray]]:
    """An index holding COUNT random unit vectors written through the store, and the vectors
    by vector id (row i is vector id i + 1)."""
    db = Database(tmp_path_factory.mktemp("vi") / "index.sqlite")
    rng = np.random.default_rng(3)
    mat = rng.standard_normal((COUNT, DIM)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    with db.write() as conn:
        vectors.create_vector_table(conn, DIM)
        items = [
            (hashlib.sha256(str(i).encode()).hexdigest(), v.tobytes()) for i, v in enumerate(mat)
        ]
        vectors.store_vectors(conn, items)
        vectors.bump_generation(conn)
    yield db, mat
    db.close()


def exact(mat: np.ndarray, query: np.ndarray, k: int, allowed: Any = None) -> list[int]:
    sims = mat @ query
    ids = np.arange(1, len(mat) + 1)
    if allowed is not None:
        keep = np.isin(ids, allowed)
        ids, sims = ids[keep], sims[keep]
    return [int(ids[i]) for i in np.argsort(-sims, kind="stable")[:k]]


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read the stored vectors in several blocks, as a large index is."""
    read = vectors.iter_vector_blocks
    monkeypatch.setattr(vectors, "iter_vector_blocks", lambda conn: read(conn, block=700))


def warm_index(conn: Any) -> VectorIndex:
    index = VectorIndex()
    index.nearest(conn, np.ones(DIM, np.float32) / DIM**0.5, 1)  # the first query: sqlite-vec
    return index


def test_warm_top_10_is_the_exact_top_10(stored: tuple[Database, np.ndarray]) -> None:
    db, mat = stored
    index = warm_index(db.conn)
    rng = np.random.default_rng(11)
    queries = [mat[i] + 0.3 * rng.standard_normal(DIM).astype(np.float32) for i in range(0, 40, 2)]
    queries += [rng.standard_normal(DIM).astype(np.float32) for _ in range(20)]
    for q in queries:
        q = (q / np.linalg.norm(q)).astype(np.float32)
        got = index.nearest(db.conn, q, 10)
        assert index.matrix is not None and len(index.matrix.ids) == COUNT
        assert [vid for vid, _ in got] == exact(mat, q, 10)
        sims = [s for _, s in got]
        assert sims == sorted(sims, reverse=True)
        assert sims == pytest.approx([float(mat[vid - 1] @ q) for vid, _ in got], abs=1e-3)


def test_warm_search_among_allowed_ids_matches_sqlite_vec(
    stored: tuple[Database, np.ndarray],
) -> None:
    db, mat = stored
    index = warm_index(db.conn)
    q = mat[7]
    for allowed in ([5], [1, 2, 3, 2_400], list(range(100, 2_000, 3))):
        got = [vid for vid, _ in index.nearest(db.conn, q, 10, allowed)]
        cold = [vid for vid, _ in vectors.knn(db.conn, q.tobytes(), 10, allowed)]
        assert got == cold == exact(mat, q, 10, allowed)
    assert index.nearest(db.conn, q, 10, []) == []


def test_new_vectors_are_found_once_stored(tmp_path: Path) -> None:
    db = Database(tmp_path / "index.sqlite")
    rng = np.random.default_rng(5)
    mat = rng.standard_normal((COUNT, DIM)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    with db.write() as conn:
        vectors.create_vector_table(conn, DIM)
        vectors.store_vectors(conn, [(f"t{i}", v.tobytes()) for i, v in enumerate(mat)])
        vectors.bump_generation(conn)
    index = warm_index(db.conn)
    q = rng.standard_normal(DIM).astype(np.float32)
    q /= np.linalg.norm(q)
    with db.write() as conn:
        vectors.store_vectors(conn, [("new", q.tobytes())])
        vectors.bump_generation(conn)
    assert docs.get_meta(db.conn, "vectors_gen") == "2"
    best = index.nearest(db.conn, q, 1)
    assert best[0][0] == COUNT + 1 and best[0][1] == pytest.approx(1.0, abs=1e-3)
    db.close()


def scanned(conn: Any) -> dict[int, bytes]:
    """Every vector as sqlite-vec answers for it row by row."""
    return {int(r[0]): bytes(r[1]) for r in conn.execute("SELECT rowid, embedding FROM vectors")}


def read_all(conn: Any) -> dict[int, bytes]:
    return {
        int(i): v.tobytes()
        for ids, mat in vectors.iter_vector_blocks(conn)
        for i, v in zip(ids, mat, strict=True)
    }


def test_reading_sqlite_vec_storage_equals_its_row_by_row_answer(tmp_path: Path) -> None:
    """Vectors read from sqlite-vec's blobs of 1,024 are the ones it returns row by row, after
    deletes (slots marked invalid) and inserts into the freed chunk space, over several chunks."""
    db = Database(tmp_path / "index.sqlite")
    rng = np.random.default_rng(5)
    with db.write() as conn:
        vectors.create_vector_table(conn, 8)
        for rnd in range(3):
            items = [
                (f"{rnd}-{i}", rng.standard_normal(8).astype(np.float32).tobytes())
                for i in range(1100)
            ]
            vectors.store_vectors(conn, items)
            ids = [r[0] for r in conn.execute("SELECT rowid FROM vectors")]
            for vid in rng.choice(ids, size=400, replace=False):
                conn.execute("DELETE FROM vectors WHERE rowid = ?", (int(vid),))
    conn = db.conn
    assert vectors._chunk_layout_matches(conn)
    assert read_all(conn) == scanned(conn) and len(scanned(conn)) == 3 * 700
    db.close()


def test_an_unknown_sqlite_vec_layout_is_read_row_by_row(
    stored: tuple[Database, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = stored
    monkeypatch.setattr(vectors, "_CHUNK_VECTORS", "vectors_vector_chunks07")  # not there
    assert not vectors._chunk_layout_matches(db.conn)
    assert read_all(db.conn) == scanned(db.conn)
