"""Embedding throughput: our LlamaEmbedder vs raw llama-cpp-python `Llama.embed` on a list.

Uses the default MiniLM GGUF (pulled into the engram cache if needed), 2 threads,
~200-token passages. Prints load time, passages/s and tokens/s for both paths, the ratio,
and short-query latency.

    python scripts/bench_embed_raw.py [--passages 96] [--threads 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

from engram.config import xdg_dir  # noqa: E402
from engram.models import sources  # noqa: E402
from engram.models.llama import LlamaEmbedder, lib  # noqa: E402

WORDS = [
    "the",
    "index",
    "stores",
    "every",
    "note",
    "as",
    "chunks",
    "of",
    "text",
    "with",
    "a",
    "vector",
    "for",
    "each",
    "chunk",
    "so",
    "that",
    "search",
    "can",
    "find",
    "related",
    "ideas",
    "even",
    "when",
    "the",
    "words",
    "differ;",
    "meetings",
    "projects",
    "budgets",
    "python",
    "sqlite",
    "graphs",
    "links",
    "tags",
    "memory",
    "agents",
    "decisions",
    "observations",
    "and",
    "plans",
    "all",
    "live",
    "in",
    "markdown",
    "files",
    "inside",
    "the",
    "vault",
    "which",
    "remains",
    "the",
    "source",
    "of",
    "truth",
]


def passages(n: int, embedder: LlamaEmbedder, target: int = 200) -> list[str]:
    """Deterministic English-like passages of about `target` tokens each."""
    out = []
    for i in range(n):
        words: list[str] = []
        j = i
        while embedder.count_tokens(" ".join(words)) < target - 2:
            words.extend(WORDS[(j * 7 + k) % len(WORDS)] for k in range(10))
            j += 1
        out.append(" ".join(words))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=96)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    path = sources.pull("default", xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"), print)

    t0 = time.perf_counter()
    ours = LlamaEmbedder(path, n_threads=args.threads)
    load_ours = time.perf_counter() - t0
    llama_cpp = lib()
    t0 = time.perf_counter()
    raw = llama_cpp.Llama(
        str(path),
        embedding=True,
        n_ctx=512,
        n_batch=512,
        n_ubatch=512,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        flash_attn=True,
        pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
        verbose=False,
    )
    load_raw = time.perf_counter() - t0
    texts = passages(args.passages, ours)
    n_tokens = sum(len(ours.tokenize(t)) for t in texts)
    ours.embed_documents(texts[:4])  # warm up both
    raw.embed(texts[:4], normalize=True)
    rates: dict[str, list[float]] = {"ours": [], "raw": []}
    for _ in range(args.rounds):  # interleaved, so background load hits both alike
        t0 = time.perf_counter()
        ours.embed_documents(texts)
        rates["ours"].append(len(texts) / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        raw.embed(texts, normalize=True)
        rates["raw"].append(len(texts) / (time.perf_counter() - t0))
    latencies = []
    for i in range(30):
        t0 = time.perf_counter()
        ours.embed_query(f"meeting notes about the budget {i}")
        latencies.append((time.perf_counter() - t0) * 1000)

    best = {k: max(v) for k, v in rates.items()}
    print(
        f"model            {path.name} ({path.stat().st_size / 1e6:.1f} MB), threads={args.threads}"
    )
    print(f"passages         {len(texts)} x ~{n_tokens / len(texts):.0f} tokens")
    print(
        f"load             ours {load_ours * 1000:.0f} ms (incl. sha256), "
        f"raw {load_raw * 1000:.0f} ms"
    )
    for name in ("ours", "raw"):
        print(
            f"{name:<16} {best[name]:.2f} passages/s  {best[name] * n_tokens / len(texts):.0f} "
            f"tokens/s  (rounds: {', '.join(f'{r:.2f}' for r in rates[name])})"
        )
    print(f"ratio            ours/raw = {best['ours'] / best['raw']:.3f}")
    print(
        f"query latency    median {statistics.median(latencies):.1f} ms, "
        f"p90 {sorted(latencies)[int(len(latencies) * 0.9)]:.1f} ms"
    )


if __name__ == "__main__":
    main()
