"""Retrieval quality on BEIR sets: corpus -> vault of notes -> index -> `engram bench`.

Reads each set from outside the repository (never copied into it): SciFact from
../shared/bench/scifact, the others from ~/.cache/engram/bench/<set>/ where
`scripts/fetch_bench.py` puts them (docs/bench-data.md says where they come from). Writes one
`<id>.md` per document (title as H1) into a work folder, indexes it in an isolated XDG
environment and runs `engram bench` for each mode asked, one line per set and mode.

    python scripts/bench_beir.py [--set scifact|arguana|nfcorpus|all] [--modes search,vsearch]
                                 [--embed] [--data DIR] [--work DIR] [--sample N]

`--sample N` indexes N documents instead of the whole corpus: every document the test qrels
judge plus a fixed random sample of the rest (the same on every run and for every model), for
comparing models where embedding the whole corpus takes hours. Its scores are higher than the
whole corpus's (fewer distractors): compare them only with each other.

ArguAna's queries are corpus documents: the line marked `self` leaves a query's own document
out of its ranking (BEIR's and MTEB's convention, which the published figures use); the other
line is what `engram bench` reports with it left in.

Targets: SciFact search nDCG@10 >= 0.67, p50 <= 5 ms (Foundation issue).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "backend"))

from engram.search import evaluate  # noqa: E402  (stdlib only: usable from any venv)

# Where fetch_bench.py puts the sets: $XDG_CACHE_HOME/engram/bench, as engram.config.xdg_dir
# computes it; not imported from there so the reference script can run without the
# project's dependencies.
BENCH_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser()
    / "engram"
    / "bench"
)
# ../shared/bench beside the checkout (or beside the folder of worktrees a checkout is in)
SHARED = next(
    (p / "shared" / "bench" for p in ROOT.parents[:2] if (p / "shared" / "bench").is_dir()),
    ROOT.parent / "shared" / "bench",
)
SETS = {
    "scifact": SHARED / "scifact",
    "arguana": BENCH_CACHE / "arguana",
    "nfcorpus": BENCH_CACHE / "nfcorpus",
    "xling-de": SHARED / "xling-de",
    "xling-zh": SHARED / "xling-zh",
}
# Sets whose queries are corpus documents, scored without the query's own document.
SELF_EXCLUDED = {"arguana"}


def queries_file(data: Path) -> Path:
    """The test queries if split out (SciFact), else the set's queries.jsonl."""
    test = data / "queries_test.jsonl"
    return test if test.exists() else data / "queries.jsonl"


def sample_ids(corpus: Path, qrels: Path, size: int) -> set[str]:
    """Every document the qrels judge plus a seeded random sample of the rest, `size` in all."""
    judged = {doc for docs in evaluate.load_qrels(qrels).values() for doc in docs}
    with corpus.open(encoding="utf-8") as fh:
        rest = sorted({json.loads(line)["_id"] for line in fh if line.strip()} - judged)
    # A fixed seed over a sorted list: the same sample on every run, machine and model.
    extra = random.Random(17).sample(rest, max(0, min(size - len(judged), len(rest))))
    return judged | set(extra)


def write_vault(corpus: Path, vault: Path, keep: set[str] | None = None) -> int:
    """One markdown note per corpus document (only those in `keep` if given); return the count."""
    vault.mkdir(parents=True, exist_ok=True)
    count = 0
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            doc = json.loads(line)
            if keep is not None and doc["_id"] not in keep:
                continue
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


def self_excluded(run_file: Path, qrels: Path) -> dict[str, float]:
    """Metrics of a TREC run file with each query's own document dropped from its ranking."""
    ranked: dict[str, dict[str, float]] = {}
    for line in run_file.read_text(encoding="utf-8").splitlines():
        qid, _, doc, _, score, _ = line.split()
        if doc != qid:
            ranked.setdefault(qid, {})[doc] = float(score)
    judged = evaluate.load_qrels(qrels)
    return evaluate.evaluate(ranked, {q: judged[q] for q in ranked})


def line(name: str, mode: str, r: dict[str, float], latency: str) -> str:
    """One result line: set, mode and the metrics `engram bench` reports."""
    return (
        f"{name:>9} {mode:>13}: nDCG@10={r['ndcg@10']:.4f} Recall@10={r['recall@10']:.4f} "
        f"Recall@100={r['recall@100']:.4f} MRR@10={r['mrr@10']:.4f} {latency}"
        f"({r['queries']} queries)"
    )


def bench_set(
    name: str, data: Path, work: Path, modes: list[str], embed: bool, sample: int | None = None
) -> None:
    """Build the set's vault and index, then print one line per mode."""
    if not (data / "corpus.jsonl").exists():
        print(f"{name:>9}: no data at {data} (see scripts/fetch_bench.py and docs/bench-data.md)")
        return
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
    qrels = data / "qrels" / "test.tsv"
    keep = sample_ids(data / "corpus.jsonl", qrels, sample) if sample else None
    n = write_vault(data / "corpus.jsonl", vault, keep)
    print(f"{name:>9}: {n} documents{' (sample)' if keep else ''} -> {vault}")
    if name not in run([*engram, "collection", "list"], env):
        run([*engram, "collection", "add", str(vault), "--name", name, "--no-index"], env)
    started = time.perf_counter()
    update = run([*engram, "update"], env).strip()
    print(f"{name:>9}: update: {update} (wall {time.perf_counter() - started:.1f}s)")
    if embed:
        started = time.perf_counter()
        done = run([*engram, "embed"], env).strip()
        print(f"{name:>9}: embed: {done} (wall {time.perf_counter() - started:.1f}s)")
    for mode in modes:
        with tempfile.TemporaryDirectory() as tmp:
            run_file = Path(tmp) / "run.trec"
            cmd = [*engram, "bench", "--queries", str(queries_file(data)), "--qrels", str(qrels)]
            cmd += ["--mode", mode, "--json", "--run-out", str(run_file)]
            if name in SELF_EXCLUDED:  # one more, so 100 remain without the query's own
                cmd += ["-n", "101"]
            r = json.loads(run(cmd, env))
            latency = f"p50={r['p50_ms']:.1f}ms p95={r['p95_ms']:.1f}ms "
            print(line(name, mode, r, latency))
            if name in SELF_EXCLUDED:
                print(line(name, f"{mode} self", self_excluded(run_file, qrels), ""))


def main() -> None:
    """Bench each set asked for."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--set", default="scifact", choices=[*SETS, "all"])
    ap.add_argument("--data", type=Path, help="Read this folder instead (one set only).")
    ap.add_argument("--work", type=Path, help="Work folder (default /tmp/engram-bench-<set>).")
    ap.add_argument("--modes", default="search")
    ap.add_argument("--embed", action="store_true", help="Run `engram embed` before benching.")
    ap.add_argument("--sample", type=int, help="Index N documents: all judged ones, then random.")
    args = ap.parse_args()
    names = list(SETS) if args.set == "all" else [args.set]
    if (args.data or args.work) and len(names) > 1:
        sys.exit("--data and --work apply to one set; drop them or name the set with --set")
    for name in names:
        data = args.data or SETS[name]
        suffix = f"-{args.sample}" if args.sample else ""  # never mixed with the whole corpus
        work = args.work or Path(f"/tmp/engram-bench-{name}{suffix}")
        label = args.data.name if args.data else name  # a set read from --data: its folder
        bench_set(label, data, work, args.modes.split(","), args.embed, args.sample)


if __name__ == "__main__":
    main()
