"""Stock BM25 reference figures for the BEIR sets, scored exactly as `engram bench` scores.

bm25s (lucene variant, k1=1.5, b=0.75), English stopwords and the Snowball English stemmer,
each document indexed as title + " " + text, top 100 per query. The metrics are Engram's own
`engram.search.evaluate` (trec_eval conventions), so a gap to `engram bench` is a ranking gap,
not an evaluation one. Sets are read as `scripts/bench_beir.py` reads them.

    python -m venv /tmp/bm25ref && /tmp/bm25ref/bin/pip install bm25s PyStemmer  # only for this
    /tmp/bm25ref/bin/python scripts/bm25_reference.py --set all [--per-query DIR]

Sets whose queries are corpus documents (ArguAna) get a second line, `self`, scored without the
query's own document (BEIR's and MTEB's `ignore_identical_ids`), as bench_beir.py does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "backend"), str(ROOT / "scripts")]

from bench_beir import SELF_EXCLUDED, SETS, queries_file  # noqa: E402

from engram.search import evaluate  # noqa: E402


def load_corpus(path: Path) -> tuple[list[str], list[str]]:
    """Document ids and their title + " " + text."""
    ids, texts = [], []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                doc = json.loads(line)
                ids.append(str(doc["_id"]))
                texts.append(f"{doc.get('title', '')} {doc.get('text', '')}")
    return ids, texts


def reference_run(
    data: Path, k1: float, b: float
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """bm25s run (top 101 per judged query) and the qrels it is scored against."""
    import bm25s
    import Stemmer

    ids, texts = load_corpus(data / "corpus.jsonl")
    qrels = evaluate.load_qrels(data / "qrels" / "test.tsv")
    queries = [(q, t) for q, t in evaluate.load_queries(queries_file(data)) if q in qrels]
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene", k1=k1, b=b)
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False))
    tokens = bm25s.tokenize(
        [t for _, t in queries], stopwords="en", stemmer=stemmer, show_progress=False
    )
    docs, scores = retriever.retrieve(tokens, k=min(101, len(ids)), show_progress=False)
    run = {
        qid: {ids[d]: float(s) for d, s in zip(row, srow, strict=True) if s > 0}
        for (qid, _), row, srow in zip(queries, docs, scores, strict=True)
    }
    return run, {q: qrels[q] for q, _ in queries}


def without_self(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each query's ranking without its own document."""
    return {q: {d: s for d, s in hits.items() if d != q} for q, hits in run.items()}


def report(name: str, run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> None:
    """One line of metrics (top 100 of each ranking)."""
    top = {q: {d: hits[d] for d in evaluate.ranked(hits)[:100]} for q, hits in run.items()}
    r = evaluate.evaluate(top, qrels)
    print(
        f"{name:>14}: nDCG@10={r['ndcg@10']:.4f} Recall@10={r['recall@10']:.4f} "
        f"Recall@100={r['recall@100']:.4f} MRR@10={r['mrr@10']:.4f} ({r['queries']} queries)"
    )


def main() -> None:
    """Print one line per set (two for ArguAna); optionally per-query nDCG@10 for gap analysis."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--set", default="all", help=f"one of {', '.join(SETS)} or all")
    ap.add_argument("--data", type=Path, help="Read this folder instead (one set only).")
    ap.add_argument("--k1", type=float, default=1.5)
    ap.add_argument("--b", type=float, default=0.75)
    ap.add_argument("--per-query", type=Path, help="write <set>.json {qid: nDCG@10} here")
    args = ap.parse_args()
    names = list(SETS) if args.set == "all" else [args.set]
    for name in names:
        data = args.data if args.data and len(names) == 1 else SETS[name]
        if not (data / "corpus.jsonl").exists():
            print(f"{name:>14}: no data at {data} (see scripts/fetch_bench.py)")
            continue
        run, qrels = reference_run(data, args.k1, args.b)
        report(name, run, qrels)
        if name in SELF_EXCLUDED:
            run = without_self(run)
            report(f"{name} self", run, qrels)
        if args.per_query:  # the comparable ranking: without the query's own document
            args.per_query.mkdir(parents=True, exist_ok=True)
            per = {
                q: evaluate.ndcg_at(evaluate.ranked(run.get(q, {})), j, 10)
                for q, j in qrels.items()
            }
            (args.per_query / f"{name}.json").write_text(json.dumps(per), encoding="utf-8")


if __name__ == "__main__":
    main()
