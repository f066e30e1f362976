"""vsearch latency at 50,000 chunks (target p50 <= 30 ms on a 2-core CPU).

Builds a synthetic index: 10,000 notes (scripts/bench_index.py's generator), each given 5
chunks with random unit vectors (dim 384, like MiniLM) through the real store functions, then
times `vsearch` end to end (KNN, grouping into documents, snippets) two ways: a one-off process
(sqlite-vec's scan) and a warm process (the in-memory matrix). Query embedding with the real
MiniLM is timed separately and added for the total.

    python scripts/bench_vsearch.py [--notes 10000] [--chunks-per-note 5] [--queries 100]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import write_vault

DIM = 384


def main() -> None:
    """Build the index, run the queries, print p50/p95 for each path."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--chunks-per-note", type=int, default=5)
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    from engram import config
    from engram.models import sources

    real_cache = config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache")
    work = Path(tempfile.mkdtemp(prefix="engram-bench-vsearch-"))
    os.environ.update(XDG_DATA_HOME=str(work / "data"), XDG_CONFIG_HOME=str(work / "config"))
    write_vault(work / "vault", args.notes)

    import engram.search.vector as vector_search
    from engram.models.fake import FakeEmbedder
    from engram.service import Engram
    from engram.store import documents as docs
    from engram.store import vectors

    fake = FakeEmbedder(dim=DIM)
    engram = Engram(config.resolve(os.environ), embedder=fake)
    engram.collection_add(str(work / "vault"), "bench")
    engram.update()
    rng = np.random.default_rng(7)
    t = time.perf_counter()
    with engram.db.write() as conn:
        vectors.create_vector_table(conn, DIM)
        docs.set_meta(conn, "embed_model", fake.model_id)
        docs.set_meta(conn, "embed_dim", str(DIM))
        rows = list(conn.execute("SELECT hash, size, title FROM documents"))
        for doc_hash, size, title in rows:
            step = max(1, size // args.chunks_per_note)
            chunk_rows, items = [], []
            for seq in range(args.chunks_per_note):
                th = hashlib.sha256(f"{doc_hash}:{seq}".encode()).hexdigest()
                chunk_rows.append((seq, seq * step, (seq + 1) * step, 1, 2, "", th, 200))
                v = rng.standard_normal(DIM).astype(np.float32)
                items.append((th, (v / np.linalg.norm(v)).tobytes()))
            vectors.add_chunks(conn, doc_hash, title, chunk_rows)
            vectors.store_vectors(conn, items)
        vectors.bump_generation(conn)
    count = vectors.vector_count(engram.db.conn)
    print(
        f"index: {len(rows)} notes, {count} chunk vectors (dim {DIM}) built in "
        f"{time.perf_counter() - t:.1f}s"
    )

    queries = [
        f"note about {w} and {x}"
        for w, x in zip(
            rng.choice(["memory", "graph", "pricing", "garden", "rust", "sqlite"], args.queries),
            rng.choice(["design", "budget", "travel", "music", "habit"], args.queries),
            strict=True,
        )
    ]

    def timed(label: str, fresh_index: bool) -> None:
        times = []
        for q in queries:
            if fresh_index:
                engram._semantic.forget()  # a one-off process: sqlite-vec scan
            t0 = time.perf_counter()
            engram.vsearch(q, n=10)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        print(
            f"{label}: p50 {statistics.median(times):.1f} ms, "
            f"p95 {times[int(len(times) * 0.95) - 1]:.1f} ms"
        )

    timed("vsearch, one-off (sqlite-vec KNN)", fresh_index=True)
    t = time.perf_counter()
    engram.vsearch(queries[0], n=10)
    engram.vsearch(queries[0], n=10)  # the second query of a process builds the matrix
    print(f"warm-up: matrix built in {(time.perf_counter() - t) * 1000:.0f} ms (once per process)")
    timed("vsearch, warm process (in-memory matrix)", fresh_index=False)
    assert count >= vector_search.MATRIX_MIN_VECTORS

    try:
        model = sources.resolve("default", real_cache)
    except Exception as exc:
        print(f"MiniLM query embedding not timed: {exc}")
        return
    from engram.models.llama import load_embedder

    real = load_embedder(model, n_threads=2)
    real.embed_query("warm up")
    times = []
    for q in queries:
        t0 = time.perf_counter()
        real.embed_query(q)
        times.append((time.perf_counter() - t0) * 1000)
    print(f"MiniLM query embedding: p50 {statistics.median(times):.1f} ms (add to the above)")


if __name__ == "__main__":
    main()
