"""Indexing speed on a synthetic vault: cold update, no-op update, one changed file.

Targets (issue: Foundation): cold >= 1,000 notes/s; no-op <= 0.5 s; one changed file <= 100 ms.
Also the cost of `engram doctor`'s link check (a sample of notes, and --full).

    python scripts/bench_index.py [--notes 10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "memory",
    "graph",
    "vault",
    "note",
    "link",
    "search",
    "index",
    "query",
    "model",
    "vector",
    "token",
    "chunk",
    "embed",
    "rank",
    "project",
    "decision",
    "meeting",
    "design",
    "review",
    "budget",
    "pricing",
    "customer",
    "roadmap",
    "release",
    "bug",
    "fix",
    "research",
    "paper",
    "idea",
    "draft",
    "summary",
    "insight",
    "lesson",
    "plan",
    "goal",
    "habit",
    "health",
    "travel",
    "recipe",
    "book",
    "film",
    "music",
    "garden",
    "python",
    "rust",
    "sqlite",
    "obsidian",
    "markdown",
    "local",
    "first",
    "sync",
    "cloud",
]


def make_note(rng: random.Random, i: int, n: int) -> str:
    """A note of 0.5-8 KB with frontmatter, headings, links, tags and a code block."""
    target = rng.randint(500, 8000)
    parts = [
        "---",
        f"title: Note {i}",
        f"tags: [{rng.choice(WORDS)}, area/{rng.choice(WORDS)}]",
        f"date: 2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        f"aliases: [N{i}]",
        "---",
        f"# Note {i}",
    ]
    size = sum(len(p) for p in parts)
    section = 0
    while size < target:
        if rng.random() < 0.15:
            section += 1
            line = f"\n## Section {section} {rng.choice(WORDS)}\n"
        elif rng.random() < 0.03:
            line = "```python\nprint('[[not a link]]')\n```"
        else:
            words = [rng.choice(WORDS) for _ in range(rng.randint(20, 60))]
            for _ in range(rng.randint(0, 3)):
                words.insert(rng.randrange(len(words)), f"[[Note {rng.randrange(n)}]]")
            if rng.random() < 0.3:
                words.append(f"#{rng.choice(WORDS)}")
            line = " ".join(words) + "."
        parts.append(line)
        size += len(line) + 1
    return "\n".join(parts) + "\n"


def write_vault(root: Path, n: int, seed: int = 7) -> None:
    """Write n notes into root, spread over 20 folders."""
    rng = random.Random(seed)
    for i in range(n):
        folder = root / f"area{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"Note {i}.md").write_text(make_note(rng, i, n), encoding="utf-8")


def main() -> None:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--keep", type=Path, help="Write the vault here and keep it.")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="engram-bench-index-"))
    vault = args.keep or work / "vault"
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(work / "data"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "XDG_CACHE_HOME": str(work / "cache"),
    }
    os.environ.update(env)

    from engram import config
    from engram.service import Engram

    if not (vault / "area0").exists():
        t = time.perf_counter()
        write_vault(vault, args.notes)
        print(
            f"wrote {args.notes} notes in {time.perf_counter() - t:.1f}s "
            f"({sum(f.stat().st_size for f in vault.rglob('*.md')) / 1e6:.1f} MB)"
        )
    engram = Engram(config.resolve(os.environ))
    engram.collection_add(str(vault), "bench")

    t = time.perf_counter()
    report = engram.update()
    cold = time.perf_counter() - t
    print(
        f"cold update: {report.added} notes in {cold:.2f}s = {report.added / cold:,.0f} "
        f"notes/s (target >= 1,000)"
    )

    times = []
    for _ in range(5):
        t = time.perf_counter()
        report = engram.update()
        times.append(time.perf_counter() - t)
    print(
        f"no-op update (in-process): median {statistics.median(times) * 1000:.0f} ms of 5, "
        f"{report.unchanged} unchanged"
    )
    # as an installed package runs: with bytecode caches (a first run writes them)
    cached = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    times = []
    for _ in range(6):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "engram", "update"], env=cached, check=True, capture_output=True
        )
        times.append(time.perf_counter() - t)
    print(
        "no-op update (engram update, whole process): "
        f"median {statistics.median(times[1:]) * 1000:.0f} ms of 5 (target <= 500)"
    )

    changed = vault / "area3" / "Note 3.md"
    times = []
    for k in range(5):
        changed.write_text(
            changed.read_text(encoding="utf-8") + f"\nedit {k} [[Note 9]]\n", encoding="utf-8"
        )
        t = time.perf_counter()
        report = engram.update(only_paths={"bench": {"area3/Note 3.md"}})
        times.append(time.perf_counter() - t)
        assert report.updated == 1, report.summary()
    print(
        f"one changed file (watcher path): median {sorted(times)[2] * 1000:.1f} ms (target <= 100)"
    )
    times = []
    for k in range(3):
        changed.write_text(changed.read_text(encoding="utf-8") + f"\nmore {k}\n", encoding="utf-8")
        t = time.perf_counter()
        report = engram.update()
        times.append(time.perf_counter() - t)
    print(f"one changed file (full scan update): median {sorted(times)[1] * 1000:.0f} ms")
    size = engram.settings.db_path.stat().st_size
    print(f"index size: {size / 1e6:.1f} MB")
    for full in (False, True):
        cpu, wall = time.process_time(), time.perf_counter()
        check = engram.check_links("bench", full=full)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            f"doctor link check{' --full' if full else ''}: wall {wall * 1000:.0f} ms, "
            f"cpu {cpu * 1000:.0f} ms ({check.status}: {check.detail})"
        )
    engram.close()


if __name__ == "__main__":
    main()
