"""Retrieval quality on BEIR SciFact: corpus -> vault of notes -> index -> `engram bench`.

Reads the benchmark from ../shared/bench/scifact (never copied into the repo), writes one
`<id>.md` per document (title as H1) into a work folder, indexes it in an isolated XDG
environment and runs `engram bench` for each mode asked.

    python scripts/bench_beir.py [--modes search,vsearch,query] [--data DIR] [--work DIR]

Targets: search nDCG@10 >= 0.67, p50 <= 5 ms (Foundation issue).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "scifact"


def write_vault(corpus: Path, vault: Path) -> int:
    """One markdown note per corpus document; return how many were written."""
    vault.mkdir(parents=True, exist_ok=True)
    count = 0
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            doc = json.loads(line)
            note = vault / f"{doc['_id']}.md"
            text = f"# {doc.get('title', '').strip()}\n\n{doc.get('text', '').strip()}\n"
            if not note.exists() or note.read_text(encoding="utf-8") != text:
                note.write_text(text, encoding="utf-8")
            count += 1
    return count


def run(cmd: list[str], env: dict[str, str]) -> str:
    """Run an engram command, fail loudly, return stdout."""
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return proc.stdout


def main() -> None:
    """Build the vault, index it, and print one line per mode."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/engram-bench-scifact"))
    ap.add_argument("--modes", default="search")
    ap.add_argument("--embed", action="store_true", help="Run `engram embed` before benching.")
    args = ap.parse_args()
    if not (args.data / "corpus.jsonl").exists():
        sys.exit(
            f"no SciFact data at {args.data} (expected corpus.jsonl, queries_test.jsonl, "
            "qrels/test.tsv)"
        )
    work = args.work
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(work / "data"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "XDG_CACHE_HOME": str(work / "cache"),
    }
    if "ENGRAM_EMBED_MODEL" not in env:  # reuse the model pulled into the user's cache
        from engram.config import xdg_dir
        from engram.models import sources

        cached = sources.models_dir(xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"))
        if (cached / sources.DEFAULT_FILE).exists():
            env["ENGRAM_EMBED_MODEL"] = str(cached / sources.DEFAULT_FILE)
    engram = [sys.executable, "-m", "engram"]
    vault = work / "vault"
    n = write_vault(args.data / "corpus.jsonl", vault)
    print(f"corpus: {n} documents -> {vault}")
    if "scifact" not in run([*engram, "collection", "list"], env):
        run([*engram, "collection", "add", str(vault), "--name", "scifact", "--no-index"], env)
    started = time.perf_counter()
    print(
        "update:",
        run([*engram, "update"], env).strip(),
        f"(wall {time.perf_counter() - started:.1f}s)",
    )
    if args.embed:
        started = time.perf_counter()
        print(
            "embed:",
            run([*engram, "embed"], env).strip(),
            f"(wall {time.perf_counter() - started:.1f}s)",
        )
    for mode in args.modes.split(","):
        out = run(
            [
                *engram,
                "bench",
                "--queries",
                str(args.data / "queries_test.jsonl"),
                "--qrels",
                str(args.data / "qrels" / "test.tsv"),
                "--mode",
                mode,
                "--json",
            ],
            env,
        )
        r = json.loads(out)
        print(
            f"{mode:>8}: nDCG@10={r['ndcg@10']:.4f} Recall@10={r['recall@10']:.4f} "
            f"Recall@100={r['recall@100']:.4f} MRR@10={r['mrr@10']:.4f} "
            f"p50={r['p50_ms']:.1f}ms p95={r['p95_ms']:.1f}ms ({r['queries']} queries)"
        )


if __name__ == "__main__":
    main()
