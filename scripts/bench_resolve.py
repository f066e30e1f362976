"""Micro-benchmark of link resolution and the auto-linker on a synthetic vault.

10k notes (in 120 folders, some names repeated), 500 attachments, 50k links of every kind;
prints index build, resolve-all, candidates() and auto-linker times.

    PYTHONPATH=backend python scripts/bench_resolve.py [--notes 10000] [--links 50000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import TypeVar

from engram.graph.autolink import AutoLinker
from engram.vault.resolve import LinkIndex, NoteInfo, candidates, resolve

T = TypeVar("T")
SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ra",
    "te",
    "su",
    "vo",
    "ne",
    "pi",
    "da",
    "go",
    "shi",
    "ran",
    "tel",
    "mor",
    "vin",
    "ast",
    "ber",
    "qu",
    "lex",
)


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()


def timed(label: str, fn: Callable[[], T]) -> T:
    """Run fn once; print wall time and this process's CPU time (steadier on a busy machine)."""
    start, cpu = time.perf_counter(), time.process_time()
    result = fn()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{label:<44} {1000 * wall:9.1f} ms wall {1000 * cpu:9.1f} ms cpu")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--links", type=int, default=50_000)
    args = parser.parse_args()
    rng = random.Random(42)

    folders = [""] + [
        "/".join(word(rng) for _ in range(rng.randint(1, 3))) + "/" for _ in range(120)
    ]
    names: list[str] = []
    while len(names) < args.notes:
        name = " ".join(word(rng) for _ in range(rng.randint(1, 3)))
        names.append(name)
        if rng.random() < 0.03:  # the same name in another folder
            names.append(name)
    notes: list[tuple[str, NoteInfo]] = []
    for name in names[: args.notes]:
        path = f"{rng.choice(folders)}{name}.md"
        headings = tuple((rng.randint(1, 3), f"{word(rng)} {word(rng)}: part") for _ in range(4))
        aliases = (word(rng),) if rng.random() < 0.1 else ()
        notes.append((path, NoteInfo(aliases, headings, (f"b{rng.randint(0, 999)}",), None)))
    attachments = [f"{rng.choice(folders)}img-{i}.png" for i in range(500)]
    paths = [p for p, _ in notes] + attachments

    links: list[tuple[str, str, dict[str, object]]] = []
    for _ in range(args.links):
        source = rng.choice(notes)[0]
        path, info = rng.choice(notes)
        stem = path.rsplit("/", 1)[-1][:-3]
        roll = rng.random()
        if roll < 0.55:
            links.append((stem, source, {}))
        elif roll < 0.65:
            links.append((path[:-3], source, {}))
        elif roll < 0.75:
            links.append((stem, source, {"heading": info.headings[0][1].replace(":", "")}))
        elif roll < 0.80:
            links.append((stem, source, {"block": info.blocks[0]}))
        elif roll < 0.85:
            links.append((path, source, {"markdown": True}))
        elif roll < 0.90:
            links.append((rng.choice(attachments).rsplit("/", 1)[-1], source, {}))
        else:
            links.append((f"{word(rng)} missing", source, {}))

    print(f"vault: {len(notes)} notes, {len(attachments)} attachments, {len(links)} links")
    index = timed("LinkIndex.build", lambda: LinkIndex.build(paths, notes))

    def resolve_all(idx: LinkIndex) -> int:
        found = 0
        for target, source, kw in links:
            found += resolve(target, source, idx, **kw).path is not None  # type: ignore[arg-type]
        return found

    found = timed("resolve all links (headings, blocks checked)", lambda: resolve_all(index))
    print(f"  resolved {found}/{len(links)}")
    timed("build + resolve all, fresh index", lambda: resolve_all(LinkIndex.build(paths, notes)))

    queries = [names[i][:-2] for i in range(0, 200, 10)] + ["Kalomi", "zzz nothing"]
    candidates(queries[0], index)  # builds the label cache once
    per_query = []
    for q in queries:
        start = time.perf_counter()
        candidates(q, index)
        per_query.append(1000 * (time.perf_counter() - start))
    print(
        f"{'candidates() median / max per query':<44} {statistics.median(per_query):9.1f} ms"
        f" / {max(per_query):.1f} ms"
    )

    vault = [(p[:-3], info.aliases) for p, info in notes]
    linker = timed("AutoLinker.for_vault (names + aliases)", lambda: AutoLinker.for_vault(vault))
    print(f"  {len(linker)} names linkable, {len(linker.ambiguous)} ambiguous skipped")
    words = [rng.choice(names) if rng.random() < 0.15 else word(rng).lower() for _ in range(600)]
    text = ""
    while len(text) < 2048:
        text += " ".join(words[len(text) % 500 : len(text) % 500 + 12]) + ". "
    text = text[:2048]
    result = timed("AutoLinker.link on a 2 KB text", lambda: linker.link(text))
    print(f"  {len(result.links)} links inserted")
    runs = []
    for _ in range(20):
        start = time.perf_counter()
        linker.link(text)
        runs.append(1000 * (time.perf_counter() - start))
    print(f"{'AutoLinker.link median of 20':<44} {statistics.median(runs):9.1f} ms")


if __name__ == "__main__":
    main()
