"""Graph neighbours for the context builder, behind one callable.

`Neighbours(seeds, hops)` returns notes up to `hops` links away from the seed documents,
either direction. The default here reads the stored `links` table and matches link targets
to notes by file name (Obsidian's rule for unambiguous names); the graph module can be
passed in instead with the same signature.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engram.store import facts as facts_store
from engram.vault.resolve import link_key


@dataclass(frozen=True)
class Neighbour:
    """A note reached from a seed document."""

    doc_id: int
    path: str
    title: str
    hops: int
    seed: int  # the seed document it was reached from


Neighbours = Callable[[Sequence[int], int], list[Neighbour]]


def link_table_neighbours(conn: Any, collection: str, skip: tuple[str, ...] = ()) -> Neighbours:
    """Neighbours over the stored links of one collection (built once, reused per call).

    Notes under the `skip` path prefixes (generated hubs such as daily notes, which link
    to every fact of a day) are left out of the walk.
    """
    docs = {
        int(r["id"]): (str(r["path"]), str(r["title"]))
        for r in facts_store.note_names(conn, collection)
        if not (skip and str(r["path"]).startswith(skip))
    }
    by_key: dict[str, list[int]] = {}
    for doc_id, (path, _) in docs.items():
        by_key.setdefault(link_key(path), []).append(doc_id)
    adjacency: dict[int, set[int]] = {}
    for source, target in facts_store.links_of(conn, collection):
        if int(source) not in docs:
            continue
        found = _resolve(str(target), by_key, docs)
        if found is not None and found != source:
            adjacency.setdefault(int(source), set()).add(found)
            adjacency.setdefault(found, set()).add(int(source))

    def neighbours(seeds: Sequence[int], hops: int) -> list[Neighbour]:
        out: list[Neighbour] = []
        seen = set(seeds)
        queue = deque((s, s, 0) for s in seeds)
        while queue:
            node, seed, depth = queue.popleft()
            if depth >= hops:
                continue
            for nxt in sorted(adjacency.get(node, ())):
                if nxt in seen:
                    continue
                seen.add(nxt)
                path, title = docs[nxt]
                out.append(Neighbour(nxt, path, title, depth + 1, seed))
                queue.append((nxt, seed, depth + 1))
        return out

    return neighbours


def _resolve(
    target: str, by_key: dict[str, list[int]], docs: dict[int, tuple[str, str]]
) -> int | None:
    candidates = by_key.get(link_key(target), [])
    if len(candidates) == 1:
        return candidates[0]
    wanted = target.strip().lstrip("/").lower().removesuffix(".md")
    exact = [c for c in candidates if docs[c][0].lower().removesuffix(".md").endswith(wanted)]
    return exact[0] if len(exact) == 1 else None
