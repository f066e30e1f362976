"""Search latency through a real `engram serve` while it embeds, against the same daemon idle.

Target (issue 20 item 2): search p95 while embedding <= 2x idle p95, for `search` (BM25) and
`vsearch` (query embedding + vector search), queries sent one at a time over HTTP.

    python scripts/bench_responsive.py [--docs 600] [--extra 400] [--seconds 40] [--work DIR]

A vault of the first `--docs` SciFact abstracts is indexed and embedded by the daemon's
start-up job (with `--work` pointing at a `scripts/bench_beir.py` work folder whose corpus is
already embedded, e.g. /tmp/engram-bench-scifact, the whole corpus is used and nothing is
re-embedded). Then SciFact's test queries run for `--seconds` with the daemon idle; then
`--extra` new notes (abstracts with their sentences reversed, so every passage needs a new
vector) are written and indexed, and the same queries run for `--seconds` while the daemon
embeds them. The extra notes are removed at the end (and unindexed by the next start). The
embedding model is the user's prepared default unless ENGRAM_EMBED_MODEL is set.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import serve_harness

ROOT = Path(__file__).resolve().parent.parent
SCIFACT = next(
    (p / "shared" / "bench" / "scifact" for p in ROOT.parents[:2] if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "bench" / "scifact",
)
EXTRA = "_responsive"
MODES = ("search", "vsearch")


def write_notes(folder: Path, docs: list[dict[str, str]], reverse: bool = False) -> None:
    """One note per abstract; `reverse` reverses its sentences (new passages, same words)."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        text = doc["text"]
        if reverse:
            text = " ".join(reversed([s for s in text.split(". ") if s]))
        (folder / f"{doc['_id']}.md").write_text(f"# {doc['title']}\n\n{text}\n", encoding="utf-8")


def measure(
    server: serve_harness.Server, queries: list[str], seconds: float, busy: bool
) -> tuple[dict[str, list[float]], int]:
    """Latencies (ms) per mode for `seconds` of back-to-back queries; with `busy`, stop when
    the daemon is no longer embedding. Also returns how many passages it embedded meanwhile."""
    took: dict[str, list[float]] = {m: [] for m in MODES}
    before = server.call("GET", "/v1/status")[1]["embedded"]
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline:
        mode = MODES[i % len(MODES)]
        started = time.perf_counter()
        query = {"q": queries[i % len(queries)], "mode": mode}
        status, body = server.call("POST", "/v1/query", query)
        elapsed = (time.perf_counter() - started) * 1000
        if status != 200:
            raise SystemExit(f"{mode} failed ({status}): {body}")
        took[mode].append(elapsed)
        i += 1
        if busy and i % 10 == 0:
            st = server.call("GET", "/v1/status")[1]
            if st["indexing"]["state"] == "idle":
                print("  (the embedding finished before the time was up)")
                break
    return took, server.call("GET", "/v1/status")[1]["embedded"] - before


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    """Idle, then while embedding; print p50/p95 per mode and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--extra", type=int, default=400)
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--work", type=Path, help="A work folder to (re)use: vault/, data/, ...")
    ap.add_argument("--data", type=Path, default=SCIFACT)
    args = ap.parse_args()

    with (args.data / "corpus.jsonl").open(encoding="utf-8") as fh:
        corpus = [json.loads(line) for line in fh if line.strip()]
    with (args.data / "queries_test.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for line in fh if line.strip()]
    work = args.work or Path(tempfile.mkdtemp(prefix="engram-responsive-"))
    vault = work / "vault"
    if not vault.is_dir():
        write_notes(vault, corpus[: args.docs])
    shutil.rmtree(vault / EXTRA, ignore_errors=True)
    if "ENGRAM_EMBED_MODEL" not in os.environ:
        from engram.config import xdg_dir
        from engram.models import sources

        model = sources.resolve("default", xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"))
        os.environ["ENGRAM_EMBED_MODEL"] = str(model)
    print(f"{serve_harness.machine()}; work folder {work}")
    server = serve_harness.start(vault, work, timeout=300)
    try:
        started = time.perf_counter()
        status = server.wait_idle(timeout=7200)
        print(
            f"start-up job: {status['documents']} notes, {status['embedded']}/{status['chunks']} "
            f"passages embedded ({time.perf_counter() - started:.0f}s)"
        )
        idle, _ = measure(server, queries, args.seconds, busy=False)
        write_notes(vault / EXTRA, corpus[-args.extra :], reverse=True)
        server.call("POST", "/v1/index", {})
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:  # until the new passages are queued for embedding
            st = server.call("GET", "/v1/status")[1]
            if st["chunks"] > st["embedded"]:
                break
            time.sleep(0.2)
        busy, embedded = measure(server, queries, args.seconds, busy=True)
        print(f"while embedding: {embedded} passages embedded during the busy measurement")
        for mode in MODES:
            p50i, p95i = percentile(idle[mode], 0.5), percentile(idle[mode], 0.95)
            p50b, p95b = percentile(busy[mode], 0.5), percentile(busy[mode], 0.95)
            print(
                f"{mode:>8}: idle p50 {p50i:6.1f} ms p95 {p95i:6.1f} ms ({len(idle[mode])} q) | "
                f"embedding p50 {p50b:6.1f} ms p95 {p95b:6.1f} ms ({len(busy[mode])} q) | "
                f"p95 ratio {p95b / p95i:.2f} (target <= 2), "
                f"mean ratio {statistics.mean(busy[mode]) / statistics.mean(idle[mode]):.2f}"
            )
        print(serve_harness.machine())
    finally:  # killed, not stopped: a graceful stop waits for the batch in progress; the
        # next start-up job unindexes the removed notes and drops their vectors
        shutil.rmtree(vault / EXTRA, ignore_errors=True)
        server.proc.kill()
        server.proc.wait()


if __name__ == "__main__":
    main()
