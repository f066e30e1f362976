"""Does the index hold what a fresh index of the same files would hold?

Everything in the index is derived from the files, so an index kept up to date incrementally
must equal one built from scratch. `snapshot` reads what a collection's index derived, keyed
by paths rather than row ids; `compare` lists what differs between two snapshots (the index
and a fresh build of the same folder). `link_drift` is the cheaper check `engram doctor` runs
on the index alone: it resolves stored links again and reports those that resolve otherwise.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from typing import Any

from engram.index.links import Resolution, resolutions
from engram.store import graph as graph_store
from engram.store import links as links_store
from engram.store import verify as store

Rows = Counter[tuple[Any, ...]]


@dataclass(frozen=True)
class Snapshot:
    """What the index derived from one collection's files; each field a multiset of rows."""

    documents: Rows
    fts: Rows
    fts_orphans: Rows
    headings: Rows
    tags: Rows
    fields: Rows
    blocks: Rows
    links: Rows
    backlinks: Rows
    unresolved: Rows
    vault_files: Rows
    facts: Rows
    chunks: Rows


@dataclass(frozen=True)
class Drift:
    """Rows of one table that only the index has, and rows only the fresh build has."""

    table: str
    only_index: tuple[tuple[Any, ...], ...]
    only_fresh: tuple[tuple[Any, ...], ...]

    def describe(self, limit: int = 3) -> str:
        """One paragraph for a person: the table and a few rows of each side."""
        head = f"{self.table}: {len(self.only_index)} rows only in the index, "
        lines = [head + f"{len(self.only_fresh)} only in a fresh build"]
        lines += [f"  index: {r}" for r in self.only_index[:limit]]
        lines += [f"  fresh: {r}" for r in self.only_fresh[:limit]]
        return "\n".join(lines)


def snapshot(conn: Any, collection: str) -> Snapshot:
    """Read what the index derived from a collection (its backlinks and unresolved links
    through the queries the graph commands use)."""
    backlinks: Rows = Counter()
    for doc_id, path, _title in graph_store.notes(conn, collection):
        for b in graph_store.backlinks(conn, doc_id):
            row = (b.line, b.kind, b.target, b.heading, b.block, b.heading_ok, b.block_ok)
            backlinks[(path, b.other_path, *row)] += 1
    unresolved = Counter(
        (r[0], *r[2:]) for r in graph_store.unresolved(conn, collection, subpaths=True)
    )
    return Snapshot(
        documents=Counter(store.documents(conn, collection)),
        fts=Counter(store.fts(conn, collection)),
        fts_orphans=Counter([(store.fts_orphans(conn),)]),
        headings=Counter(store.headings(conn, collection)),
        tags=Counter(store.tags(conn, collection)),
        fields=Counter(store.fields(conn, collection)),
        blocks=Counter(store.blocks(conn, collection)),
        links=Counter(store.links(conn, collection)),
        backlinks=backlinks,
        unresolved=unresolved,
        vault_files=Counter(store.vault_files(conn, collection)),
        facts=Counter(store.facts(conn, collection)),
        chunks=Counter(store.chunks(conn, collection)),
    )


def compare(index: Snapshot, fresh: Snapshot) -> list[Drift]:
    """Every table where the index differs from a fresh build of the same files."""
    out = []
    for f in fields(Snapshot):
        mine: Rows = getattr(index, f.name)
        theirs: Rows = getattr(fresh, f.name)
        if mine != theirs:
            only_index = tuple(sorted((mine - theirs).elements(), key=repr))
            only_fresh = tuple(sorted((theirs - mine).elements(), key=repr))
            out.append(Drift(f.name, only_index, only_fresh))
    return out


@dataclass(frozen=True)
class LinkDrift:
    """A stored link that resolves otherwise when resolved again."""

    source: str
    line: int
    target: str  # as written, with its #heading or #^block
    stored: Resolution  # (key, resolved_path, resolved_doc_id, heading_ok, block_ok)
    expected: Resolution

    def describe(self) -> str:
        """`source:line [[target]]: stored -> expected`, paths and flags only."""
        stored, expected = _show(self.stored), _show(self.expected)
        return f"{self.source}:{self.line} [[{self.target}]]: {stored} -> {expected}"


@dataclass(frozen=True)
class LinkCheck:
    """What `link_drift` checked and found."""

    checked: int
    drift: tuple[LinkDrift, ...]
    misattributed: int  # links (of all notes) whose note id is not that of their path


def link_drift(conn: Any, collection: str, doc_ids: list[int] | None = None) -> LinkCheck:
    """Resolve the stored links of some notes (all: None) again, from the index's own file
    list, notes, headings and block ids, and report those stored otherwise. Every link's note
    id is also checked against its resolved path, which costs one query for the whole index."""
    links = links_store.resolved_links(conn, collection, doc_ids)
    drift = []
    for lk, expected in zip(links, resolutions(conn, collection, links), strict=True):
        stored = (lk.key, lk.resolved_path, lk.resolved_doc_id, lk.heading_ok, lk.block_ok)
        if stored != expected:
            drift.append(LinkDrift(lk.source, lk.line, _written(lk), stored, expected))
    return LinkCheck(len(links), tuple(drift), store.misattributed(conn, collection))


def _written(lk: links_store.StoredLink) -> str:
    return lk.target + (f"#^{lk.block}" if lk.block else f"#{lk.heading}" if lk.heading else "")


def _show(r: Resolution) -> str:
    _key, path, doc_id, heading_ok, block_ok = r
    where = "nowhere" if path is None else path + ("" if doc_id is not None else " (no note id)")
    flags = [
        f"{name} {'found' if ok else 'missing'}"
        for name, ok in (("heading", heading_ok), ("block", block_ok))
        if ok is not None
    ]
    return where + (f" ({', '.join(flags)})" if flags else "")
