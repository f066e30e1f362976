"""Incremental indexing: scan, compare (mtime, size) then hash, parse what changed, store.

Work is committed in small transactions, so an interrupted update leaves a consistent index
that the next run completes; notes are parsed between them, never inside one (in the daemon,
away from the writers' turn too: index/turns.py). A file whose hash matches a vanished
document is a rename: the row moves, keeping its id, and is stored again from the new path (a
title taken from the file name changes with it). Links are stored resolved (index/links.py):
the folder's file list is brought up to date first, in the update's first transaction.
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from engram.codec import Seconds, arg
from engram.index import extracted, links, turns
from engram.index.loader import Item, Loaded, ParsePool, load_all
from engram.index.resolver import LinkResolver, NoteIds
from engram.store import documents as docs
from engram.store import links as links_store
from engram.store.admin import merge_fts_segments
from engram.store.db import Database
from engram.vault.resolve import NoteInfo
from engram.vault.scan import FileStat, scan

BATCH_SECONDS = 0.5
BATCH_MAX = 500
# An update that stored at least this many notes, and half the index or more, ends by merging
# the full-text index's segments (store/admin.py): small vaults and edits leave them to FTS5
MERGE_AFTER = 1_000

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class CollectionSpec:
    """What the indexer needs to know about a collection."""

    name: str
    root: Any  # pathlib.Path
    pattern: str
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexWarning:
    """What went wrong with a file (or, without a path, a collection) during an update."""

    collection: str
    path: str
    message: str


@dataclass
class UpdateReport:
    """Counts and warnings of one `update` run (the ids and paths are for this process)."""

    added: int = 0
    updated: int = 0
    renamed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0
    seconds: Seconds = 0.0
    warnings: list[IndexWarning] = field(default_factory=list)
    changed_ids: list[int] = arg(local=True, factory=list)
    removed_paths: list[tuple[str, str]] = arg(local=True, factory=list)

    def summary(self) -> str:
        """One line for humans."""
        return (
            f"{self.added} added, {self.updated} updated, {self.renamed} renamed, "
            f"{self.removed} removed, {self.unchanged} unchanged"
            + (f", {self.skipped} skipped" if self.skipped else "")
            + f" in {self.seconds:.2f}s"
        )


@dataclass(frozen=True)
class _Plan:
    """One collection's update: what the index holds, the files to look at, and whether it
    is a watcher update (`wanted`: the paths it names) or a full one that walked the folder."""

    col: CollectionSpec
    states: dict[str, docs.DocState]
    files: list[FileStat]
    wanted: set[str] | None
    walked: set[str] | None
    force: bool


def update(
    db: Database,
    collections: Iterable[CollectionSpec],
    max_file_bytes: int,
    progress: Progress | None = None,
    only_paths: dict[str, set[str]] | None = None,
    pool: ParsePool | None = None,
    force: bool = False,
) -> UpdateReport:
    """Bring the index in line with the files of each collection.

    `only_paths` ({collection: {relative paths}}) limits the work to those files (the watcher's
    fast path); files not found are removed from the index. `pool` parses in a worker
    (index/loader.py says when). `force` re-reads every file as if it had changed and leaves
    every link of the collection to be resolved again (a repair).
    """
    started = time.perf_counter()
    report = UpdateReport()
    plans = []
    for col in collections:

        def warn(rel: str, msg: str, _c: str = col.name) -> None:
            report.warnings.append(IndexWarning(_c, rel, msg))

        wanted = None if only_paths is None else only_paths.get(col.name, set())
        if wanted is not None and not wanted:
            continue
        states = docs.doc_states(db.conn, col.name, wanted)  # a watcher update: its paths
        walked: set[str] | None = None  # every file of the folder, for links
        if wanted is None:  # one walk lists the notes and every file
            walked = set()
            files = list(scan(col.root, col.pattern, col.ignore, warn, walked))
        else:  # a watcher update lists only the files it names (all of them, the first time)
            files = [f for f in (_stat_one(col, rel, warn) for rel in sorted(wanted)) if f]
            if not links_store.has_files(db.conn, col.name):
                walked = links.vault_files(col.root)
        plans.append(_Plan(col, states, files, wanted, walked, force))
    total = sum(len(plan.files) for plan in plans)
    done = 0
    for plan in plans:
        done = _update_collection(db, plan, max_file_bytes, report, progress, done, total, pool)
    with db.write() as conn:
        docs.set_meta(conn, "last_update", _now())
    if _rebuilt(db, report.added + report.updated):
        merge_fts_segments(db)
    report.seconds = time.perf_counter() - started
    return report


def _rebuilt(db: Database, stored: int) -> bool:
    """Whether an update stored MERGE_AFTER notes or more, and half the index or more: the
    index was (re)built, not edited (counted only then: a save's update does not pay it)."""
    if stored < MERGE_AFTER:
        return False
    return 2 * stored >= int(db.conn.execute("SELECT count(*) FROM documents").fetchone()[0])


def _stat_one(col: CollectionSpec, rel: str, warn: Callable[[str, str], None]) -> FileStat | None:
    from engram.vault.scan import hidden_or_ignored_dir, is_ignored, matches, stat_file

    parts = rel.split("/")
    if any(hidden_or_ignored_dir(p) for p in parts[:-1]) or parts[-1].startswith("."):
        return None
    if not matches(col.pattern, rel) or (col.ignore and is_ignored(rel, col.ignore)):
        return None
    st = stat_file(col.root, rel, warn)
    if st is None:
        return None
    return FileStat(rel, str(col.root / rel), st.st_mtime_ns, st.st_size)


def _update_collection(
    db: Database,
    plan: _Plan,
    max_bytes: int,
    report: UpdateReport,
    progress: Progress | None,
    done: int,
    total: int,
    pool: ParsePool | None = None,
) -> int:
    col, states, files, wanted, walked = plan.col, plan.states, plan.files, plan.wanted, plan.walked
    seen: set[str] = set()
    changed: list[FileStat] = []
    for f in files:
        st = states.get(f.rel)
        if not plan.force and st is not None and st.mtime_ns == f.mtime_ns and st.size == f.size:
            seen.add(f.rel)
            report.unchanged += 1
            done += 1
        else:
            changed.append(f)
    if progress and done:
        progress(done, total)
    scope = set(states) if wanted is None else wanted & states.keys()
    on_disk = {f.rel for f in files}
    vanished = {states[p].hash: states[p] for p in sorted(scope - on_disk)}
    claimed: set[int] = set()

    by_rel = {f.rel: f for f in changed}
    resolver = LinkResolver(col.name, _note_ids(db, plan), walked, len(changed))
    items = [(f.path, f.rel, f.size, f.mtime_ns) for f in changed]
    loads = _loads(db, col.name, items, max_bytes, pool, plan.force)
    with db.write() as conn:
        links.sync_files(conn, col.name, col.root, walked, wanted or ())
    while got := _next_batch(col.name, loads, items, pool):
        with db.write() as conn:
            for loaded in got:
                f = by_rel[loaded.rel]
                extracted.remember(conn, loaded)
                existing = states.get(f.rel)
                if existing is not None and plan.force:  # stored again even if the text is same
                    existing = existing._replace(hash="")
                if _apply(conn, col, f, loaded, existing, vanished, claimed, resolver, report):
                    seen.add(f.rel)
                done += 1
            resolver.flush(conn)
        if progress and done < total:
            progress(done, total)
    with db.write() as conn:
        gone = [states[p] for p in sorted(scope - seen) if states[p].id not in claimed]
        report.removed += docs.delete_documents(conn, (g.id for g in gone))
        report.removed_paths.extend((col.name, g.path) for g in gone)
        if plan.force:  # resolved again from scratch by the refresh that follows
            links_store.mark_collection_pending(conn, col.name)
    if progress:
        progress(done, total)
    return done


def _note_ids(db: Database, plan: _Plan) -> NoteIds:
    """The notes' ids as the update began: a watcher update knows those at its own paths (as
    they were: none for a new one) and looks any other up in the index when asked."""
    known = {path: st.id for path, st in plan.states.items()}
    if plan.wanted is None:
        return NoteIds(known, None)
    lookup = partial(docs.doc_id, db.conn, plan.col.name)
    return NoteIds({p: known.get(p) for p in plan.wanted}, lookup)


def _loads(
    db: Database,
    collection: str,
    items: list[Item],
    max_bytes: int,
    pool: ParsePool | None,
    force: bool,
) -> Iterator[Loaded]:
    """The changed files loaded, in order: PDFs from the cache of their text and notes parsed
    before a write made the daemon's job start again (`ParsePool.keep`) first."""
    cached, items = extracted.split_cached(db.conn, collection, items, force)
    if pool is not None and not force:
        kept, items = pool.take_kept(collection, items)
        cached += kept
    return itertools.chain(cached, load_all(collection, items, max_bytes, pool))


def _next_batch(
    collection: str, loads: Iterator[Loaded], items: list[Item], pool: ParsePool | None
) -> list[Loaded]:
    """The next notes to store (none: all stored). Parsing waits for workers outside any
    transaction, and in the daemon away from the writers' turn (turns.py); a write that ran
    meanwhile may have made the update's scan stale: it starts again (`Replan`), keeping what
    was parsed."""
    got, wrote = turns.away(partial(_take, loads))
    if wrote:
        item_of = {item[1]: item for item in items}
        for loaded in got:
            if pool is not None and loaded.rel in item_of:
                pool.keep(collection, item_of[loaded.rel], loaded)
        raise turns.Replan
    return got


def _take(loads: Iterator[Loaded]) -> list[Loaded]:
    """The next notes to store in one transaction: up to BATCH_MAX, or what loads within
    BATCH_SECONDS."""
    started = time.perf_counter()
    out: list[Loaded] = []
    for loaded in loads:
        out.append(loaded)
        if len(out) >= BATCH_MAX or time.perf_counter() - started > BATCH_SECONDS:
            break
    return out


def _apply(
    conn: Any,
    col: CollectionSpec,
    f: FileStat,
    loaded: Loaded,
    existing: docs.DocState | None,
    vanished: dict[str, docs.DocState],
    claimed: set[int],
    resolver: LinkResolver,
    report: UpdateReport,
) -> bool:
    """Store one new or modified file; False when it was skipped."""
    rec = loaded.record
    if loaded.skipped or rec is None:
        report.skipped += 1
        report.warnings.append(IndexWarning(col.name, f.rel, loaded.skipped or "skipped"))
        return False
    if existing is not None and existing.hash == loaded.sha256:
        # same text, new time: what derives from the time (its date, a fact's updatedAt) moves
        docs.touch_document(conn, existing.id, f.mtime_ns, f.size, rec.doc_date)
        report.unchanged += 1
        report.changed_ids.append(existing.id)
        return True
    moved = vanished.pop(loaded.sha256, None) if existing is None else None
    if moved is not None:  # the row keeps its id (facts, sync, vectors), the rest is re-derived
        claimed.add(moved.id)
        docs.rename_document(conn, moved.id, f.rel)
        resolver.moved(moved.id, moved.path)
    for w in loaded.warnings:
        report.warnings.append(IndexWarning(col.name, f.rel, w))
    doc_id, _ = docs.upsert_note(conn, rec, _now())
    resolver.stored(conn, doc_id, f.rel)
    own = NoteInfo(
        headings=tuple((h[0], h[1]) for h in rec.headings), blocks=tuple(b for b, _ in rec.blocks)
    )
    links_store.insert_links(conn, doc_id, resolver.rows(conn, f.rel, rec.links, own))
    report.changed_ids.append(doc_id)
    if moved is not None:
        report.renamed += 1
    elif existing is None:
        report.added += 1
    else:
        report.updated += 1
    return True


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
