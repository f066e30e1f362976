"""The daemon's memory with every model loaded: `engram serve` on a synthetic vault with the
default embedding model (all-MiniLM-L6-v2, GGUF) and the tiny generated reranker and generator
GGUFs (tests/fixtures/tiny_gguf.py) configured; after indexing and embedding, keyword,
vector and hybrid queries (expansion and rerank on) load every model, then the server's
resident memory is read from /proc (VmRSS now, VmHWM the peak). Target (issue: engram serve):
<= 500 MB. Loopback only; the default model is pulled into the usual cache once.

    python scripts/rss_server.py [--notes 300] [--queries 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import serve_harness
from bench_index import write_vault

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["budget review", "launch plan risks", "weekly sync notes", "pricing decision"]


def models(work: Path) -> dict[str, str]:
    """ENGRAM_*_MODEL for the default embedder and freshly generated tiny rerank/generate."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "backend"))
    from engram import config
    from engram.models import sources
    from engram.models.convert import convert_bert
    from tests.fixtures.tiny_gguf import tiny_bert_dir, write_tiny_llama

    embed = sources.pull("default", config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"))
    rerank = convert_bert(tiny_bert_dir(work / "rerank", reranker=True), work / "rerank.gguf")
    chat = write_tiny_llama(work / "chat.gguf", chat=True)
    return {
        "ENGRAM_EMBED_MODEL": str(embed),
        "ENGRAM_RERANK_MODEL": str(rerank.path),
        "ENGRAM_GENERATE_MODEL": str(chat),
    }


def rss(server: serve_harness.Server, what: str) -> float:
    """Print and return the current resident memory."""
    now, peak = server.rss_mb()
    print(f"  {what:<44} RSS {now:6.0f} MB   peak (VmHWM) {peak:6.0f} MB")
    return peak


def ask(server: serve_harness.Server, mode: str, count: int) -> None:
    """`count` queries of one mode; every one must answer 200."""
    for i in range(count):
        body = {"q": QUERIES[i % len(QUERIES)], "mode": mode, "n": 10}
        status, reply = server.call("POST", "/v1/query", body)
        if status != 200:
            raise SystemExit(f"{mode} failed: {status} {reply}")


def main() -> None:
    """Build the vault, start the daemon with the models, query, print the memory."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--notes", type=int, default=300)
    ap.add_argument("--queries", type=int, default=20, help="Queries per mode.")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="engram-rss-"))
    try:
        os.environ.update(models(work))
        write_vault(work / "vault", args.notes)
        print(f"machine: {serve_harness.machine()}; {args.notes} notes")
        started = time.perf_counter()
        server = serve_harness.start(work / "vault", work, timeout=300)
        rss(server, "started")
        status = server.wait_idle(timeout=3600)
        print(
            f"  indexed and embedded in {time.perf_counter() - started:.0f}s: "
            f"{status['documents']} notes, {status['embedded']}/{status['chunks']} passages"
        )
        rss(server, "after indexing and embedding")
        try:
            for mode in ("search", "vsearch", "query"):
                ask(server, mode, args.queries)
                rss(server, f"after {args.queries} x {mode}")
            states = {
                role: m["state"]
                for role, m in server.call("GET", "/v1/status")[1]["models"].items()
            }
            print(f"  models: {states}")
            peak = rss(server, "at the end")
            verdict = "within" if peak <= 500 else "OVER"
            print(f"peak resident memory {peak:.0f} MB: {verdict} the 500 MB target")
        finally:
            print(f"daemon stopped with exit code {server.stop()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
