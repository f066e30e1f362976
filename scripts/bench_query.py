"""Hybrid retrieval on BEIR SciFact: one table for search, vsearch and query, plus the
expansion skip rule measured on the same queries.

Needs the embedded SciFact index that `python scripts/bench_beir.py --embed` builds (in
--work). Rows:
  search                         BM25
  vsearch                        vectors (the configured embedder, MiniLM by default)
  query --no-expand --no-rerank  fusion of the two
  query + tiny models            the full pipeline with a generated tiny reranker and
                                 generator GGUF (random weights: measures the pipeline's
                                 cost, not quality; no real reranker or instruct model can
                                 be downloaded on the development machines)
With --rerank/--generate PATH, real models are benchmarked instead of the tiny ones.

    python scripts/bench_query.py [--work /tmp/engram-bench-scifact] [--rerank P] [--generate P]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "bench" / "scifact"


def bench(env: dict[str, str], mode: str, *flags: str) -> dict[str, float]:
    """One `engram bench` run, as JSON."""
    cmd = [
        sys.executable,
        "-m",
        "engram",
        "bench",
        "--queries",
        str(DATA / "queries_test.jsonl"),
        "--qrels",
        str(DATA / "qrels" / "test.tsv"),
        "--mode",
        mode,
        "--json",
        *flags,
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    return dict(json.loads(proc.stdout))


def tiny_models(folder: Path) -> tuple[Path, Path]:
    """A tiny cross-encoder reranker and a tiny chat generator (tests/fixtures)."""
    sys.path.insert(0, str(ROOT))
    from engram.models.convert import convert_bert
    from tests.fixtures.tiny_gguf import tiny_bert_dir, write_tiny_llama

    rerank = convert_bert(
        tiny_bert_dir(folder / "rerank", reranker=True), folder / "rerank.gguf"
    ).path
    return rerank, write_tiny_llama(folder / "chat.gguf", chat=True)


def skip_rule(env: dict[str, str]) -> None:
    """How often the expansion skip rule fires, and how right BM25's #1 is when it does."""
    os.environ.update(env)
    from engram import config
    from engram.search import bm25, fusion, hybrid
    from engram.search.evaluate import load_qrels, load_queries
    from engram.service import Engram
    from engram.service.upkeep import _plain

    engram = Engram(config.resolve(os.environ))
    qrels = load_qrels(DATA / "qrels" / "test.tsv")
    rows = []
    for qid, text in load_queries(DATA / "queries_test.jsonl"):
        hits = bm25.ranked(engram.db.conn, engram.parse(_plain(text)), 2, with_snippets=False).hits
        if hits:
            raw = [-h.bm25 for h in hits]
            right = qrels.get(qid, {}).get(PurePosixPath(hits[0].path).stem, 0) > 0
            rows.append(
                (fusion.strong_top_hit(raw, hybrid.SKIP_MIN_TOP, hybrid.SKIP_MIN_RATIO), right)
            )
    skipped = [right for skip, right in rows if skip]
    print(
        f"expansion skip rule (raw BM25 >= {hybrid.SKIP_MIN_TOP}, >= "
        f"{hybrid.SKIP_MIN_RATIO}x the second): fires on {len(skipped) / len(rows):.0%} of "
        f"queries; BM25's #1 is relevant for {sum(skipped) / max(len(skipped), 1):.0%} of "
        f"those vs {sum(r for _, r in rows) / len(rows):.0%} overall"
    )


def main() -> None:
    """Print the table."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work", type=Path, default=Path("/tmp/engram-bench-scifact"))
    ap.add_argument("--rerank", type=Path)
    ap.add_argument("--generate", type=Path)
    args = ap.parse_args()
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(args.work / "data"),
        "XDG_CONFIG_HOME": str(args.work / "config"),
    }
    from engram.config import xdg_dir
    from engram.models import sources

    cached = sources.models_dir(xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"))
    env.setdefault("ENGRAM_EMBED_MODEL", str(cached / sources.DEFAULT_FILE))
    if args.rerank and args.generate:
        rerank, generate, label = args.rerank, args.generate, "query + configured models"
    else:
        rerank, generate = tiny_models(Path(tempfile.mkdtemp(prefix="engram-tiny-")))
        label = "query + tiny models"
    rows = [
        ("search", bench(env, "search")),
        ("vsearch", bench(env, "vsearch")),
        ("query --no-expand --no-rerank", bench(env, "query", "--no-expand", "--no-rerank")),
        (
            label,
            bench(
                {**env, "ENGRAM_RERANK_MODEL": str(rerank), "ENGRAM_GENERATE_MODEL": str(generate)},
                "query",
            ),
        ),
    ]
    print(f"{'mode':32} {'nDCG@10':>8} {'R@100':>7} {'p50 ms':>8} {'p95 ms':>8}")
    for name, r in rows:
        print(
            f"{name:32} {r['ndcg@10']:8.4f} {r['recall@100']:7.4f} {r['p50_ms']:8.1f} "
            f"{r['p95_ms']:8.1f}"
        )
    skip_rule(env)


if __name__ == "__main__":
    main()
