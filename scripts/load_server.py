"""Load on the daemon: BM25 queries over HTTP at a fixed concurrency, on synthetic vaults.

Target (issue: engram serve): 2,000 queries at concurrency 16 on a 5,000-note vault with zero
errors and p99 <= 100 ms; the server's resident memory is reported too. Loopback only.

Two vaults, reported separately:
- `bench`: the indexing benchmark's vault (scripts/bench_index.py). Its 52-word vocabulary
  puts nearly every query word in nearly every note, so each query ranks ~all 5,000 notes:
  a worst case for BM25.
- `zipf`: the same sizes and structure, words drawn from a 20,000-word vocabulary with Zipf
  frequencies (like natural language); queries drawn from the same distribution.

    python scripts/load_server.py [--vault-kind bench|zipf|both] [--notes 5000]
                                  [--queries 2000] [--concurrency 1,4,16]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import serve_harness
from bench_index import WORDS, write_vault


class Zipf:
    """A pseudo-language: `size` made-up words, the k-th most common with frequency ~ 1/k."""

    def __init__(self, size: int = 20_000, seed: int = 5) -> None:
        rng = random.Random(seed)
        syllables = [a + b for a in "bcdfghjklmnprstvwz" for b in "aeiou"]
        words: set[str] = set()
        while len(words) < size:
            words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
        self.words = sorted(words, key=lambda w: (len(w), w))
        weights = [1 / (k + 1) for k in range(size)]
        total = sum(weights)
        self.cumulative = list(itertools.accumulate(w / total for w in weights))

    def sample(self, rng: random.Random, k: int) -> list[str]:
        """k words by frequency."""
        idx = [bisect.bisect_left(self.cumulative, rng.random()) for _ in range(k)]
        return [self.words[min(i, len(self.words) - 1)] for i in idx]

    def sample_evenly(self, rng: random.Random, k: int) -> list[str]:
        """k words drawn evenly from the vocabulary: mostly the rarer words a person searches
        for, not the few that are in nearly every note."""
        return [rng.choice(self.words) for _ in range(k)]


def write_zipf_vault(root: Path, n: int, lang: Zipf, seed: int = 7) -> None:
    """n notes of 0.5-8 KB with frontmatter, headings and links, words from `lang`."""
    rng = random.Random(seed)
    for i in range(n):
        folder = root / f"area{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        parts = [f"---\ntags: [{lang.sample(rng, 1)[0]}]\n---\n# Note {i}"]
        size, target = 0, rng.randint(500, 8000)
        while size < target:
            if rng.random() < 0.15:
                line = f"\n## {' '.join(lang.sample(rng, 3))}\n"
            else:
                words = lang.sample(rng, rng.randint(20, 60))
                words.insert(rng.randrange(len(words)), f"[[Note {rng.randrange(n)}]]")
                line = " ".join(words) + "."
            parts.append(line)
            size += len(line) + 1
        (folder / f"Note {i}.md").write_text("\n".join(parts) + "\n", encoding="utf-8")


def queries(
    count: int, pick: Callable[[random.Random, int], list[str]], seed: int = 11
) -> list[str]:
    """What people type into the recall modal: 70% one to three words, 10% each a prefix
    (3-5 letters and *), a "phrase", a word with an -exclusion."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        kind = rng.random()
        words = pick(rng, rng.randint(1, 3))
        if kind < 0.1:
            out.append(words[0][: rng.randint(3, 5)] + "*")
        elif kind < 0.2:
            out.append(f'"{words[0]} {pick(rng, 1)[0]}"')
        elif kind < 0.3:
            out.append(f"{words[0]} -{pick(rng, 1)[0]}")
        else:
            out.append(" ".join(words))
    return out


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, round(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


async def run(
    url: str, token: str, todo: list[str], concurrency: int
) -> tuple[list[tuple[str, float]], int]:
    """Send every query; ((query, latency in ms) pairs, errors)."""
    latencies: list[tuple[str, float]] = []
    errors = 0
    pending = iter(todo)
    headers = {"Authorization": f"Bearer {token}"}

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal errors
        for q in pending:
            started = time.perf_counter()
            try:
                async with session.post(f"{url}/v1/query", json={"q": q, "n": 10}) as resp:
                    body = await resp.json()
                    if resp.status != 200 or "results" not in body:
                        errors += 1
            except (aiohttp.ClientError, TimeoutError, ValueError):
                errors += 1
            latencies.append((q, (time.perf_counter() - started) * 1000))

    limit = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(headers=headers, connector=limit) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return latencies, errors


def load(kind: str, args: argparse.Namespace) -> None:
    """Build one vault, start the daemon on it, run the load, print the figures."""
    work = Path(tempfile.mkdtemp(prefix=f"engram-load-{kind}-"))
    vault = work / "vault"
    if kind == "zipf":
        lang = Zipf()
        write_zipf_vault(vault, args.notes, lang)
        todo = queries(args.queries, lang.sample)
    else:
        write_vault(vault, args.notes)
        todo = queries(args.queries, lambda rng, k: rng.sample(WORDS, k))
    print(f"\n[{kind} vault] machine: {serve_harness.machine()}")
    started = time.perf_counter()
    server = serve_harness.start(vault, work)
    status = server.wait_idle()
    print(
        f"daemon up and indexed {status['documents']} notes in "
        f"{time.perf_counter() - started:.1f}s ({status['indexing']['lastJob']['summary']})"
    )
    try:
        asyncio.run(run(server.url, server.token, todo[:50], args.concurrency[-1]))  # warm up
        for concurrency in args.concurrency:
            t = time.perf_counter()
            timed, errors = asyncio.run(run(server.url, server.token, todo, concurrency))
            latencies = [ms for _, ms in timed]
            wall = time.perf_counter() - t
            p99 = percentile(latencies, 99)
            print(
                f"{len(latencies)} BM25 queries at concurrency {concurrency}: {errors} errors, "
                f"p50 {percentile(latencies, 50):.1f} ms, p95 {percentile(latencies, 95):.1f} "
                f"ms, p99 {p99:.1f} ms (target <= 100 at 16), max {max(latencies):.1f} ms, "
                f"{len(latencies) / wall:.0f} queries/s ({serve_harness.machine()})"
            )
            for kind in ("words", "phrase", "exclusion", "prefix"):
                subset = [ms for q, ms in timed if kind_of(q) == kind]
                print(
                    f"  {kind} ({len(subset)}): p50 {percentile(subset, 50):.1f} ms, "
                    f"p99 {percentile(subset, 99):.1f} ms"
                )
        rss, peak = server.rss_mb()
        t = time.perf_counter()
        timed, errors = asyncio.run(
            run(server.url, server.token, ["zzqxv"] * len(todo), args.concurrency[-1])
        )
        wall = time.perf_counter() - t
        nothing = [ms for _, ms in timed]
        print(
            f"server overhead (same load, a word no note has): {errors} errors, "
            f"p50 {percentile(nothing, 50):.1f} ms, p99 {percentile(nothing, 99):.1f} ms, "
            f"{len(nothing) / wall:.0f} queries/s"
        )
        serial = serial_ms(work, todo)
        print(f"in-process, one query at a time (the BM25 cost itself): {serial:.1f} ms")
        print(f"server RSS {rss:.0f} MB (peak {peak:.0f} MB; no models loaded: target <= 500)")
        print(f"after the run: {serve_harness.machine()}")
    finally:
        code = server.stop()
        print(
            f"daemon stopped with exit code {code}; discovery removed: "
            f"{not server.discovery.exists()}"
        )
        shutil.rmtree(work, ignore_errors=True)


def serial_ms(work: Path, todo: list[str], count: int = 300) -> float:
    """Mean milliseconds per query with the facade in this process, no HTTP, no concurrency."""
    from engram import config
    from engram.service import Engram

    engram = Engram(config.resolve(serve_harness.isolated_env(work)))
    try:
        started = time.perf_counter()
        for q in todo[:count]:
            engram.search(q, n=10)
        return (time.perf_counter() - started) * 1000 / min(count, len(todo))
    finally:
        engram.close()


def kind_of(q: str) -> str:
    """Which of the query shapes `q` is."""
    if q.endswith("*"):
        return "prefix"
    if q.startswith('"'):
        return "phrase"
    return "exclusion" if " -" in q else "words"


def main() -> None:
    """Run the load on the chosen vault kinds."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--vault-kind", choices=["bench", "zipf", "both"], default="both")
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument(
        "--concurrency",
        type=lambda v: [int(c) for c in v.split(",")],
        default=[16],
        help="One or more, comma-separated (e.g. 1,4,16): the load is run at each in turn.",
    )
    args = ap.parse_args()
    for kind in ("bench", "zipf") if args.vault_kind == "both" else (args.vault_kind,):
        load(kind, args)


if __name__ == "__main__":
    main()
