"""Vault graph speed on a synthetic vault: link resolution during updates, graph build,
PageRank, Louvain communities, betweenness, backlinks and the other graph questions.

Targets (issue: the vault graph), 10k notes / 50k links: graph build <= 2 s; PageRank and
communities <= 1 s each; backlinks query <= 10 ms. The machine may be shared with other jobs,
so every figure is printed as wall time and as this process's CPU time.

The default vault has topics (folders) whose notes mostly link inside their topic, to a few
popular notes more than to the rest, as real vaults do. `--uniform` links every note to
notes drawn uniformly at random instead: a graph with no community structure, Louvain's
worst case.

    python scripts/bench_graph.py [--notes 10000] [--links-per-note 5] [--uniform] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORDS = ["memory", "graph", "vault", "note", "link", "search", "index", "query", "model"]
TOPICS = 50
ATTACHMENTS = 500


def timed(label: str, func: Callable[[], Any], target: str = "") -> Any:
    """Run func once; print its wall and CPU time."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = func()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    suffix = f"  (target {target})" if target else ""
    print(f"{label:<46} wall {wall * 1000:8.1f} ms   cpu {cpu * 1000:8.1f} ms{suffix}")
    return result


def repeated(label: str, func: Callable[[int], Any], runs: int, target: str = "") -> None:
    """Run func(i) `runs` times; print the median wall and CPU time of one run."""
    walls, cpus = [], []
    for i in range(runs):
        cpu, wall = time.process_time(), time.perf_counter()
        func(i)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    suffix = f"  (target {target})" if target else ""
    print(
        f"{label:<46} wall {statistics.median(walls) * 1000:8.2f} ms   "
        f"cpu {statistics.median(cpus) * 1000:8.2f} ms  median of {runs}{suffix}"
    )


def write_vault(root: Path, notes: int, per_note: int, uniform: bool, seed: int = 7) -> int:
    """Notes in topic folders with `per_note` links each (wikilinks with headings and blocks,
    markdown links, embeds, dangling links, a shared `Index` name per folder); return links."""
    rng = random.Random(seed)
    size = max(notes // TOPICS, 1)
    popularity = [1 / (r + 1) for r in range(size)]  # Zipf-like: a few notes are linked a lot
    for k in range(ATTACHMENTS):
        (root / "attachments").mkdir(parents=True, exist_ok=True)
        (root / "attachments" / f"img{k}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([k % 256]))
    total = 0
    for i in range(notes):
        topic = i % TOPICS
        folder = root / f"topic{topic}"
        folder.mkdir(parents=True, exist_ok=True)
        links = []
        for _ in range(per_note):
            if uniform or rng.random() < 0.3:
                j = rng.randrange(notes)
            else:
                j = rng.choices(range(size), popularity)[0] * TOPICS + topic
                j = j if j < notes else topic
            roll = rng.random()
            if roll < 0.55:
                links.append(f"[[Note {j}]]")
            elif roll < 0.65:
                links.append(f"[[topic{j % TOPICS}/Note {j}#Section 1|see {j}]]")
            elif roll < 0.72:
                links.append(f"[[Note {j}#^b{j}]]")
            elif roll < 0.82:
                links.append(f"[note {j}](Note%20{j}.md)")
            elif roll < 0.88:
                links.append(f"![[img{rng.randrange(ATTACHMENTS)}.png]]")
            elif roll < 0.94:
                links.append("[[Index]]")
            else:
                links.append(f"[[Missing {rng.randrange(notes)}]]")
        total += len(links)
        body = [
            f"---\ntags: [topic{topic}, {rng.choice(WORDS)}]\n---",
            f"# Note {i}",
            " ".join(rng.choice(WORDS) for _ in range(40)) + f" {links[0]}.",
            "## Section 1",
            " ".join(rng.choice(WORDS) for _ in range(30)) + " " + " ".join(links[1:]) + ".",
            f"A quotable line. ^b{i}",
        ]
        (folder / f"Note {i}.md").write_text("\n\n".join(body) + "\n", encoding="utf-8")
    for t in range(TOPICS):
        (root / f"topic{t}" / "Index.md").write_text(f"# Index of topic {t}\n", encoding="utf-8")
    return total


def main() -> None:
    """Build the vault, index it, and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--links-per-note", type=int, default=5)
    ap.add_argument("--uniform", action="store_true", help="Links drawn uniformly at random.")
    ap.add_argument("--keep", type=Path, help="Write the vault here and keep it.")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="engram-bench-graph-"))
    os.environ.update(
        XDG_DATA_HOME=str(work / "data"),
        XDG_CONFIG_HOME=str(work / "config"),
        XDG_CACHE_HOME=str(work / "cache"),
    )
    from engram import config
    from engram.graph.model import VaultGraph
    from engram.graph.notes import NoteFinder
    from engram.index import indexer
    from engram.service import Engram
    from engram.store import graph as store

    vault = args.keep or work / "vault"
    if not (vault / "topic0").exists():
        n_links = timed(
            "write vault",
            lambda: write_vault(vault, args.notes, args.links_per_note, args.uniform),
        )
        print(f"  {args.notes} notes, {n_links} links, {ATTACHMENTS} attachments")
    e = Engram(config.resolve(os.environ))
    e.collection_add(str(vault), "bench")
    spec = [indexer.CollectionSpec("bench", vault, "**/*.md")]
    max_bytes = e.settings.max_file_bytes

    print("\n== link resolution inside `engram update` (links are resolved as they are stored)")
    report = timed("cold update: indexing (workers not in cpu)", lambda: indexer.update(
        e.db, spec, max_bytes))  # fmt: skip
    timed("cold update: + pending links", lambda: e.after_update(report, spec, None))
    conn = e.db.conn
    counts = conn.execute(
        "SELECT count(*), count(resolved_path), count(resolved_doc_id) FROM links"
    ).fetchone()
    print(f"  links {counts[0]}, to a file {counts[1]}, to a note {counts[2]}")
    report = timed("no-op update: indexing", lambda: indexer.update(e.db, spec, max_bytes))
    timed("no-op update: + pending links", lambda: e.after_update(
        report, spec, None))  # fmt: skip
    note = vault / "topic3" / "Note 3.md"
    only = {"bench": {"topic3/Note 3.md"}}

    def edit(k: int) -> Any:
        note.write_text(note.read_text(encoding="utf-8") + f"\nedit {k} [[Note {k}]]\n")
        return indexer.update(e.db, spec, max_bytes, only_paths=only)

    for k in range(3):
        report = timed(f"one-file update {k + 1}: indexing", lambda k=k: edit(k))
        timed(f"one-file update {k + 1}: + pending links", lambda r=report: e.after_update(
            r, spec, only))  # fmt: skip
    new = vault / "topic4" / "Brand new.md"
    new.write_text("# Brand new\n\n[[Note 1]]\n", encoding="utf-8")
    only_new = {"bench": {"topic4/Brand new.md"}}
    report = timed("new-note update: indexing", lambda: indexer.update(
        e.db, spec, max_bytes, only_paths=only_new))  # fmt: skip
    timed("new-note update: + pending links", lambda: e.after_update(report, spec, only_new))

    print("\n== graph")
    nodes = timed("read notes and edges (SQL)", lambda: (
        store.notes(conn, "bench"), store.edges(conn, "bench")))  # fmt: skip
    timed("build networkx graph", lambda: VaultGraph(*nodes))
    timed("build note finder (names, titles, aliases)", lambda: NoteFinder(
        store.lookup_rows(conn, "bench")))  # fmt: skip
    g = timed("graph build through the facade (all above)",
              lambda: e.graph.vault_graph("bench")[1].graph, "<= 2 s")  # fmt: skip
    print(f"  {len(g)} nodes, {g.edge_count} edges")
    timed("undirected view", g.undirected)
    timed("PageRank", g.pagerank, "<= 1 s")
    communities = timed("Louvain communities", g.communities, "<= 1 s")
    print(f"  {len(communities)} communities, largest {len(communities[0])}")
    _, method = timed("betweenness", g.betweenness)
    print(f"  {method}")
    timed("themes (metrics already computed)", lambda: e.themes("bench"))
    timed("rank --by bridging (metrics already computed)", lambda: e.rank(
        by="bridging", collection="bench"))  # fmt: skip
    rng = random.Random(1)
    picks = [f"topic{i % TOPICS}/Note {i}.md" for i in rng.sample(range(args.notes), 200)]
    repeated("backlinks (lookup + SQL + context lines)", lambda i: e.backlinks(picks[i]), 200,
             "<= 10 ms")  # fmt: skip
    repeated("backlinks of the most linked note", lambda i: e.backlinks("Note 0"), 20)
    repeated("outgoing links", lambda i: e.links(picks[i]), 200)
    repeated("neighbors depth 2", lambda i: e.neighbors(picks[i], 2), 50)
    repeated("shortest path", lambda i: e.path(picks[i], picks[-1 - i]), 50)
    repeated("rank --about (BM25 + PageRank among the hits)", lambda i: e.rank(
        about=WORDS[i % len(WORDS)]), 10)  # fmt: skip
    timed("unresolved links", lambda: e.unresolved("bench"))
    e.close()


if __name__ == "__main__":
    main()
