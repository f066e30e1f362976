"""Write latency through a real `engram serve` while it works: `POST /v1/facts` timed while the
daemon embeds a vault, and right after a person saves one very large note.

Target (issue 30 item 1): p99 <= 2 s in both phases.

    python scripts/bench_writes.py [--docs 3000] [--seconds 60] [--big-mb 2] [--work DIR]

Phase 1: a vault of the first `--docs` SciFact abstracts (one note each) is registered and
indexed, then `engram serve` starts with the watcher on and its start-up job embeds every
passage; facts are stored one after another (a pause of `--gap` seconds between them) for
`--seconds` or until the job ends. Phase 2: once the daemon is idle, a note of `--big-mb`
megabytes of distinct sentences is saved into the vault and the watcher's job parses, chunks and
embeds it while facts are stored the same way. The embedding model is the user's prepared
default unless ENGRAM_EMBED_MODEL is set.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import serve_harness

ROOT = Path(__file__).resolve().parent.parent
SCIFACT = next(
    (p / "shared" / "bench" / "scifact" for p in ROOT.parents[:2] if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "bench" / "scifact",
)


def write_notes(folder: Path, docs: list[dict[str, str]]) -> None:
    """One note per abstract."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        text = f"# {doc['title']}\n\n{doc['text']}\n"
        (folder / f"{doc['_id']}.md").write_text(text, encoding="utf-8")


def big_note(docs: list[dict[str, str]], megabytes: float) -> str:
    """Abstracts with their words reversed (every passage new) until the size is reached."""
    parts, size, i = ["# A very long note\n"], 0, 0
    while size < megabytes * 1_000_000:
        words = docs[i % len(docs)]["text"].split()
        para = f"\n## Part {i}\n\n{' '.join(reversed(words))} ({i})\n"
        parts.append(para)
        size += len(para.encode("utf-8"))
        i += 1
    return "".join(parts)


def store_facts(
    server: serve_harness.Server, seconds: float, gap: float, label: str
) -> tuple[list[float], int]:
    """Store facts one at a time while the daemon is busy; latencies (s), passages embedded."""
    took: list[float] = []
    before = server.call("GET", "/v1/status")[1]["embedded"]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        code, body = server.call("POST", "/v1/facts", {"text": f"{label} fact {len(took)}."})
        took.append(time.perf_counter() - started)
        if code != 201:
            raise SystemExit(f"POST /v1/facts failed ({code}): {body}")
        st = server.call("GET", "/v1/status")[1]
        if st["indexing"]["state"] == "idle":
            break
        time.sleep(gap)
    return took, server.call("GET", "/v1/status")[1]["embedded"] - before


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(name: str, took: list[float], embedded: int) -> None:
    """One line per phase."""
    print(
        f"{name}: {len(took)} facts, p50 {percentile(took, 0.5):.2f} s, "
        f"p99 {percentile(took, 0.99):.2f} s, max {max(took):.2f} s (write "
        f"{took.index(max(took)) + 1}) (target p99 <= 2 s); {embedded} passages embedded meanwhile"
    )


def main() -> None:
    """Both phases; p50/p99 of each."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--gap", type=float, default=0.25)
    ap.add_argument("--big-mb", type=float, default=2.0)
    ap.add_argument("--work", type=Path, help="A work folder (created when missing)")
    ap.add_argument("--data", type=Path, default=SCIFACT)
    args = ap.parse_args()

    with (args.data / "corpus.jsonl").open(encoding="utf-8") as fh:
        corpus = [json.loads(line) for line in fh if line.strip()]
    work = args.work or Path(tempfile.mkdtemp(prefix="engram-writes-"))
    vault = work / "vault"
    write_notes(vault, corpus[: args.docs])
    if "ENGRAM_EMBED_MODEL" not in os.environ:
        from engram.config import xdg_dir
        from engram.models import sources

        model = sources.resolve("default", xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"))
        os.environ["ENGRAM_EMBED_MODEL"] = str(model)
    env = serve_harness.isolated_env(work)
    cli = [sys.executable, "-m", "engram"]
    subprocess.run([*cli, "init", str(vault), "--name", "vault"], env=env, check=True)
    print(f"{serve_harness.machine()}; work folder {work}")
    server = serve_harness.start(vault, work, timeout=600, watch=True)
    try:
        deadline = time.monotonic() + 600
        while server.call("GET", "/v1/status")[1]["embedded"] == 0:  # embedding has begun
            if time.monotonic() > deadline:
                raise SystemExit("the start-up job never began embedding")
            time.sleep(0.2)
        took, embedded = store_facts(server, args.seconds, args.gap, "Embedding")
        report(f"while embedding {args.docs} notes", took, embedded)

        server.wait_idle(timeout=7200)
        (vault / "Big.md").write_text(big_note(corpus, args.big_mb), encoding="utf-8")
        deadline = time.monotonic() + 60
        while server.call("GET", "/v1/status")[1]["indexing"]["state"] == "idle":
            if time.monotonic() > deadline:
                raise SystemExit("the watcher never picked up the big note")
            time.sleep(0.05)
        took, embedded = store_facts(server, args.seconds, args.gap, "Big note")
        report(f"after saving a {args.big_mb:g} MB note", took, embedded)
        print(serve_harness.machine())
    finally:  # killed: a graceful stop waits for the batch in progress
        server.proc.kill()
        server.proc.wait()


if __name__ == "__main__":
    main()
