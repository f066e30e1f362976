"""Resolve stored links after an index update, Obsidian's way, touching only what changed.

A link can only resolve to a file with the same lookup key (`vault.resolve.link_key`), so
after an update we re-resolve: links never resolved yet, links written in changed notes
(their rows are new; a moved note's relative links and same-folder ties change too), links
pointing at changed notes (headings and block ids may have changed), and links whose key
matches a file that appeared or disappeared (a new note can satisfy old dangling links; a
deleted or moved one turns its links into stubs).

Links resolve against every file of the collection's folder, attachments and notes outside
the index mask included, as Obsidian's vault does: the list lives in `vault_files`, refreshed
by a scan on a full update and by the given paths on a watcher update.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.store import documents as docs
from engram.store import links as store
from engram.store.db import Database
from engram.vault.resolve import LinkIndex, NoteInfo, link_key, resolve
from engram.vault.scan import hidden_or_ignored_dir

GENERATION_KEY = "graph_generation"
ALL_FILES_OVER = 2_000  # past this many keys, load the whole file list instead of by key


@dataclass(frozen=True)
class Scope:
    """One collection to refresh: its name and folder, and what the index update changed."""

    collection: str
    root: Path
    changed_ids: tuple[int, ...] = ()
    removed: tuple[str, ...] = ()
    only_paths: frozenset[str] | None = None  # None: scan the whole folder


@dataclass(frozen=True)
class Refresh:
    """What a refresh did."""

    files_added: int = 0
    files_removed: int = 0
    links_checked: int = 0
    links_changed: int = 0
    seconds: float = 0.0
    generation: int = 0


def scopes(
    conn: Any,
    collections: Iterable[tuple[str, Path]],
    changed_ids: Iterable[int] = (),
    removed_paths: Iterable[tuple[str, str]] = (),
    only_paths: dict[str, set[str]] | None = None,
) -> list[Scope]:
    """One Scope per updated collection from an index update's report."""
    changed: dict[str, list[int]] = {}
    for doc_id, collection, _ in store.doc_paths(conn, changed_ids):
        changed.setdefault(collection, []).append(doc_id)
    removed: dict[str, list[str]] = {}
    for collection, path in removed_paths:
        removed.setdefault(collection, []).append(path)
    return [
        Scope(
            name,
            root,
            tuple(sorted(changed.get(name, ()))),
            tuple(sorted(removed.get(name, ()))),
            None if only_paths is None else frozenset(only_paths.get(name, ())),
        )
        for name, root in collections
    ]


def refresh(db: Database, scopes: Iterable[Scope], configured: Iterable[str]) -> Refresh:
    """Bring `vault_files` and the links' resolution in line with the files; bump the graph
    generation when any link or note changed."""
    started = time.perf_counter()
    added = removed = checked = changed = 0
    touched = False
    scopes = list(scopes)
    walked = {  # the folder walks happen before the write lock is taken
        s.collection: vault_files(s.root)
        for s in scopes
        if s.only_paths is None or not store.has_files(db.conn, s.collection)
    }
    with db.write() as conn:
        store.prune_files(conn, configured)
        for scope in scopes:
            a, r, affected = _sync_files(conn, scope, walked.get(scope.collection))
            links = store.links_to_resolve(
                conn, scope.collection, scope.changed_ids, scope.changed_ids, affected
            )
            added, removed, checked = added + a, removed + r, checked + len(links)
            changed += _resolve(conn, scope.collection, links)
            touched = touched or bool(scope.changed_ids or scope.removed)
        generation = int(docs.get_meta(conn, GENERATION_KEY) or 0)
        if touched or changed:
            generation += 1
            docs.set_meta(conn, GENERATION_KEY, str(generation))
    return Refresh(added, removed, checked, changed, time.perf_counter() - started, generation)


def generation(conn: Any) -> int:
    """The graph generation: bumped by every refresh that changed a link or a note."""
    return int(docs.get_meta(conn, GENERATION_KEY) or 0)


def _sync_files(conn: Any, scope: Scope, on_disk: set[str] | None) -> tuple[int, int, set[str]]:
    """Update the collection's file list from a walk of its folder (`on_disk`; a watcher
    update gives paths instead); return (added, removed, affected link keys)."""
    name = scope.collection
    added: list[str] = []
    removed: list[str] = []
    if on_disk is not None:
        stored = store.file_paths(conn, name)
        added = sorted(on_disk - stored)
        removed = sorted(stored - on_disk)
        store.add_files(conn, name, ((path, link_key(path)) for path in added))
        for path in removed:
            store.remove_file(conn, name, path)
    else:
        for path in sorted((scope.only_paths or frozenset()) | set(scope.removed)):
            if _is_vault_file(scope.root, path):
                if store.add_file(conn, name, path, link_key(path)):
                    added.append(path)
            elif store.remove_file(conn, name, path):
                removed.append(path)
        for _, _, path in store.doc_paths(conn, scope.changed_ids):
            if store.add_file(conn, name, path, link_key(path)):
                added.append(path)
    return len(added), len(removed), {link_key(p) for p in (*added, *removed)}


def vault_files(root: Path) -> set[str]:
    """Every file under `root` Obsidian would see: dot-folders, dot-files and tool folders
    are skipped (as the scanner does); symlinked folders are followed once."""
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
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir():
                    if not hidden_or_ignored_dir(entry.name):
                        walk(entry.path, prefix + entry.name + "/")
                elif entry.is_file() and _storable(entry.name):
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
    if not links:
        return 0
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
    _add_note_info(conn, index, {p: doc_ids[p] for p in subpath_targets if p in doc_ids})
    rows = []
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
        row = (key, path, doc_ids.get(path) if path else None, heading_ok, block_ok)
        if row != (lk.key, lk.resolved_path, lk.resolved_doc_id, lk.heading_ok, lk.block_ok):
            rows.append((*row, lk.id))
    store.set_resolutions(conn, rows)
    return len(rows)


def _add_note_info(conn: Any, index: LinkIndex, notes: dict[str, int]) -> None:
    """Give the index the headings and block ids of the notes that subpath links target."""
    if not notes:
        return
    ids = list(notes.values())
    headings = store.headings_of(conn, ids)
    blocks = store.blocks_of(conn, ids)
    for path, doc_id in notes.items():
        info = NoteInfo(
            headings=tuple(headings.get(doc_id, ())), blocks=tuple(blocks.get(doc_id, ()))
        )
        index.add(path, info)


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)
