"""Memory speed: storing facts, adopting hand-made fact notes, recall, context, wake.

Builds a throwaway vault (copies of a few hundred generated notes) in a temporary folder with
isolated XDG directories, then times each operation through the facade and prints numbers.

    python scripts/bench_memory.py [--facts 200] [--notes 1000] [--adopt 200] [--queries 50]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

WORDS = [
    "roast",
    "grind",
    "espresso",
    "pricing",
    "tier",
    "plan",
    "churn",
    "cupping",
    "roaster",
    "origin",
    "kenya",
    "ethiopia",
    "colombia",
    "subscription",
    "pause",
    "bag",
    "shipping",
    "invoice",
    "payment",
    "adyen",
    "stripe",
    "growth",
    "retention",
    "calendar",
    "weekly",
    "sync",
    "decision",
    "lesson",
    "deadline",
    "partner",
    "quality",
    "latte",
    "filter",
]
PEOPLE = ["Ana Ruiz", "Kenji Sato", "Lena Park", "Omar Haddad", "Sofia Rossi"]


def sentence(rng: random.Random, n: int = 12) -> str:
    """Random words with a person and a trigger word so types and links vary."""
    words = [rng.choice(WORDS) for _ in range(n)]
    words.insert(rng.randrange(len(words)), rng.choice(PEOPLE))
    lead = rng.choice(["We decided", "Learned that", "Kenji promised", "Noticed", "Ana prefers"])
    return f"{lead} {' '.join(words)}."


def ms(samples: list[float]) -> str:
    """p50 / p95 in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"


def main() -> None:
    """Run the benchmark and print one line per measurement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--adopt", type=int, default=200)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[var] = str(base / var.lower())
        vault = base / "vault"
        for person in PEOPLE:
            (vault / "People").mkdir(parents=True, exist_ok=True)
            (vault / "People" / f"{person}.md").write_text(f"# {person}\n\nWorks at Brewline.\n")
        for i in range(args.notes):
            folder = vault / f"Notes/{i % 20}"
            folder.mkdir(parents=True, exist_ok=True)
            links = f"See [[{rng.choice(PEOPLE)}]] and [[Note {rng.randrange(args.notes)}]]."
            (folder / f"Note {i}.md").write_text(f"# Note {i}\n\n{sentence(rng, 40)}\n{links}\n")

        from engram import config
        from engram.service import Engram

        engram = Engram(config.resolve(os.environ))
        started = time.perf_counter()
        engram.init_vault(str(vault))
        print(
            f"init + index {args.notes + len(PEOPLE)} notes: {time.perf_counter() - started:.2f} s"
        )

        adds = []
        for _ in range(args.facts):
            started = time.perf_counter()
            engram.fact_add(sentence(rng), tags=[rng.choice(WORDS)])
            adds.append(time.perf_counter() - started)
        print(f"fact add ({args.facts} facts, note + index + ledger + daily): {ms(adds)}")

        human = vault / "Engram" / "observations"
        human.mkdir(parents=True, exist_ok=True)
        for i in range(args.adopt):
            (human / f"Hand made {i}.md").write_text(f"---\nmine: {i}\n---\n{sentence(rng)}\n")
        started = time.perf_counter()
        engram.update()
        elapsed = time.perf_counter() - started
        print(f"update adopting {args.adopt} hand-made fact notes: {elapsed:.2f} s")

        queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(args.queries)]
        recalls, contexts = [], []
        for q in queries:
            started = time.perf_counter()
            engram.recall(q)
            recalls.append(time.perf_counter() - started)
        print(
            f"recall over {args.facts + args.adopt} facts ({args.queries} queries): {ms(recalls)}"
        )
        for q in queries[:20]:
            started = time.perf_counter()
            result = engram.memory_context(q, budget=4000)
            contexts.append(time.perf_counter() - started)
            assert result.used_tokens <= 4000
        print(f"memory context, budget 4000 (20 queries): {ms(contexts)}")
        started = time.perf_counter()
        engram.wake()
        print(f"wake: {(time.perf_counter() - started) * 1000:.1f} ms")
        engram.close()


if __name__ == "__main__":
    main()
