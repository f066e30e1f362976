"""Recall@10 of the warm vector index (float16 in memory) against exact float32 search, on a
real embedded index with real queries.

Opens a COPY of an index made by `scripts/bench_beir.py --embed` (the file is only read, but
work on a copy all the same), embeds the set's queries with the index's own model, and
compares the warm index's 10 nearest passages with the exact 10 nearest by float32 dot
product over every stored vector.

    python scripts/bench_vector_recall.py INDEX.sqlite QUERIES.jsonl [--queries 300]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import exact_top10


def main() -> None:
    """Print recall@10 and the time per query of both paths."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("index", type=Path)
    ap.add_argument("queries", type=Path)
    ap.add_argument("--queries-count", type=int, default=300)
    args = ap.parse_args()
    from engram import config
    from engram.models import sources
    from engram.models.llama import load_embedder
    from engram.search.vector import VectorIndex
    from engram.store import documents as docs
    from engram.store.db import Database

    db = Database(args.index)
    conn = db.conn
    stored = docs.get_meta(conn, "embed_model")
    cache = config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache")
    embedder = load_embedder(sources.resolve("default", cache), n_threads=2)
    if embedder.model_id != stored:
        raise SystemExit(f"the index holds vectors of {stored}, not {embedder.model_id}")
    texts = [json.loads(line)["text"] for line in args.queries.open(encoding="utf-8")]
    texts = texts[: args.queries_count]
    qs = np.stack([embedder.embed_query(t) for t in texts]).astype(np.float32)
    t = time.perf_counter()
    truth = exact_top10(conn, qs)
    exact_ms = (time.perf_counter() - t) * 1000 / len(qs)
    index = VectorIndex()
    index.nearest(conn, qs[0], 10)
    index.nearest(conn, qs[0], 10)  # the second query reads the vectors into memory
    assert index.matrix is not None
    t = time.perf_counter()
    got = [{vid for vid, _ in index.nearest(conn, q, 10)} for q in qs]
    warm_ms = (time.perf_counter() - t) * 1000 / len(qs)
    recalls = [len(g & e) / 10 for g, e in zip(got, truth, strict=True)]
    print(
        f"{args.index}: {len(index.matrix.ids):,} vectors, {len(qs)} queries: recall@10 "
        f"{np.mean(recalls):.4f} (min {min(recalls):.1f}, {sum(r < 1 for r in recalls)} queries "
        f"below 1); warm float16 {warm_ms:.2f} ms/query, exact float32 (numpy, batched) "
        f"{exact_ms:.2f} ms/query; load average {os.getloadavg()[0]:.1f}"
    )
    db.close()


if __name__ == "__main__":
    main()
