"""Link resolution, Obsidian's way, kept in step with the index by the update that changes it.

Links resolve against every file of the collection's folder, attachments and notes outside
the index mask included, as Obsidian's vault does: the list lives in `vault_files`, brought up
to date at the start of each update (a walk of the folder, or the paths a watcher update
gives). The indexer then stores each note's links already resolved (index/resolver.py), so a
cold update resolves every link once, as it writes it. What the update changes for links
stored earlier is marked pending (`links.key` NULL) in the same transaction as the change,
and `refresh` resolves the pending links once the files are indexed:

- a file appeared or disappeared: links with its lookup key (`vault.resolve.link_key`: a new
  note satisfies old dangling links, a deleted or moved one turns its links into stubs);
- a note changed: links to its headings and blocks;
- a note is deleted, or its file is no note any more: links to it;
- a path gains a note (created, or moved there; a moved note is stored again, its own links
  with it): links already resolved to that path get its id, once per committed batch,
  whichever order the update met the notes in (a cold update meets most notes after the
  notes linking to them; a rename, after the notes that sort before its new path); those
  asking for a heading or block are checked again.

An interrupted update leaves the pending marks behind, so the next one completes the work.
`resolutions` is also what `engram doctor` checks stored links against (index/verify.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.index.resolver import add_note_info
from engram.store import documents as docs
from engram.store import links as store
from engram.store.db import Database
from engram.vault.resolve import LinkIndex, link_key, resolve
from engram.vault.scan import hidden_or_ignored_dir, utf8_name

GENERATION_KEY = "graph_generation"
ALL_FILES_OVER = 2_000  # past this many keys, load the whole file list instead of by key


@dataclass(frozen=True)
class Scope:
    """One collection to refresh: its name and folder, and whether the update that ran before
    already brought its file list up to date."""

    collection: str
    root: Path
    synced: bool = False


@dataclass(frozen=True)
class Refresh:
    """What a refresh did."""

    files_added: int = 0
    files_removed: int = 0
    links_checked: int = 0
    links_changed: int = 0
    seconds: float = 0.0
    generation: int = 0


def scopes(collections: Iterable[tuple[str, Path]], synced: bool = False) -> list[Scope]:
    """One Scope per collection (name, folder)."""
    return [Scope(name, root, synced) for name, root in collections]


def refresh(db: Database, scopes: Iterable[Scope], configured: Iterable[str]) -> Refresh:
    """Resolve the pending links of each collection (listing its files first when no update
    did); bump the link generation when any link changed."""
    started = time.perf_counter()
    added = removed = checked = changed = 0
    scopes = list(scopes)
    walked = {  # the folder walks happen before the write lock is taken
        s.collection: vault_files(s.root) for s in scopes if not s.synced
    }
    with db.write() as conn:
        store.prune_files(conn, configured)
        for scope in scopes:
            if not scope.synced:
                a, r = sync_files(conn, scope.collection, scope.root, walked[scope.collection])
                added, removed = added + a, removed + r
            links = store.pending_links(conn, scope.collection)
            checked += len(links)
            changed += _resolve(conn, scope.collection, links)
        generation = int(docs.get_meta(conn, GENERATION_KEY) or 0)
        if changed:
            generation += 1
            docs.set_meta(conn, GENERATION_KEY, str(generation))
    return Refresh(added, removed, checked, changed, time.perf_counter() - started, generation)


def generation(conn: Any) -> tuple[int, int]:
    """What the graph is built from, as two counters that only grow: links (bumped by every
    refresh that changed one) and notes (the latest change number of a stored document).
    Both are in the index, so an update interrupted before its refresh still shows."""
    return int(docs.get_meta(conn, GENERATION_KEY) or 0), docs.max_seq(conn)


def sync_files(
    conn: Any, collection: str, root: Path, on_disk: set[str] | None, paths: Iterable[str] = ()
) -> tuple[int, int]:
    """Bring the collection's file list in line with a walk of its folder (`on_disk`) or, on a
    watcher update, with the given paths; links whose lookup key gained or lost a file become
    pending. Returns (files added, files removed)."""
    added: list[str] = []
    removed: list[str] = []
    if on_disk is not None:
        stored = store.file_paths(conn, collection)
        added = sorted(on_disk - stored)
        removed = sorted(stored - on_disk)
        store.add_files(conn, collection, ((path, link_key(path)) for path in added))
        for path in removed:
            store.remove_file(conn, collection, path)
    else:
        for path in sorted(set(paths)):
            if _is_vault_file(root, path):
                if store.add_file(conn, collection, path, link_key(path)):
                    added.append(path)
            elif store.remove_file(conn, collection, path):
                removed.append(path)
    store.mark_keys_pending(conn, collection, {link_key(p) for p in (*added, *removed)})
    return len(added), len(removed)


def vault_files(root: Path) -> set[str]:
    """Every file under `root` Obsidian would see: dot-folders, dot-files, tool folders and
    symlinks are skipped (as the scanner does)."""
    found: set[str] = set()
    seen: set[tuple[int, int]] = set()

    def walk(folder: str, prefix: str) -> None:
        try:
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in seen:
                return
            seen.add((st.st_dev, st.st_ino))
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith(".") or not utf8_name(entry.name):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not hidden_or_ignored_dir(entry.name):
                        walk(entry.path, prefix + entry.name + "/")
                elif entry.is_file(follow_symlinks=False) and _storable(entry.name):
                    found.add(prefix + entry.name)
            except OSError:
                continue

    walk(str(root), "")
    return found


def _storable(name: str) -> bool:
    """False for a file name that is not valid UTF-8 (SQLite text cannot hold it)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_vault_file(root: Path, rel: str) -> bool:
    parts = rel.split("/")
    if any(hidden_or_ignored_dir(p) for p in parts[:-1]) or parts[-1].startswith("."):
        return False
    return (root / rel).is_file()


def _resolve(conn: Any, collection: str, links: list[store.StoredLink]) -> int:
    """Resolve `links` against the collection's files; store the ones that changed."""
    rows = [
        (*row, lk.id)
        for lk, row in zip(links, resolutions(conn, collection, links), strict=True)
        if row != (lk.key, lk.resolved_path, lk.resolved_doc_id, lk.heading_ok, lk.block_ok)
    ]
    store.set_resolutions(conn, rows)
    return len(rows)


Resolution = tuple[str | None, str | None, int | None, int | None, int | None]


def resolutions(conn: Any, collection: str, links: list[store.StoredLink]) -> list[Resolution]:
    """Where each link resolves against the collection's files and notes as stored now:
    (key, resolved_path, resolved_doc_id, heading_ok, block_ok), in the order given."""
    if not links:
        return []
    link_keys = [link_key(lk.target) for lk in links]
    keys = set(link_keys)
    files = (
        store.file_paths(conn, collection)
        if len(keys) > ALL_FILES_OVER
        else store.files_with_keys(conn, collection, keys)
    )
    index = LinkIndex.build(files)
    sources = {lk.source for lk in links}
    for source in sources - set(files):  # a note must be able to link to itself
        index.add(source)
    paths = [
        resolve(lk.target, lk.source, index, markdown=lk.kind == "markdown").path for lk in links
    ]
    subpath_targets = {
        p for p, lk in zip(paths, links, strict=True) if p and (lk.heading or lk.block)
    }
    doc_ids = store.doc_ids_by_path(conn, collection, {p for p in paths if p})
    add_note_info(conn, index, {p: doc_ids[p] for p in subpath_targets if p in doc_ids})
    out: list[Resolution] = []
    for path, lk, key in zip(paths, links, link_keys, strict=True):  # subpaths: notes only
        heading_ok = block_ok = None
        if path in doc_ids and (lk.heading or lk.block):
            res = resolve(
                lk.target,
                lk.source,
                index,
                heading=lk.heading,
                block=lk.block,
                markdown=lk.kind == "markdown",
            )
            heading_ok, block_ok = _flag(res.heading_found), _flag(res.block_found)
        out.append((key, path, doc_ids.get(path) if path else None, heading_ok, block_ok))
    return out


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)
