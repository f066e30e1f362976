"""Resolving a note's links as the indexer stores it (see index/links.py for the whole scheme)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engram.store import links as store
from engram.vault.resolve import LinkIndex, NoteInfo, link_key, resolve

SHARED_INDEX_OVER = 64  # notes to resolve before one index of every file beats lookups by key

# a link as parsed: kind, target, heading, block, display, embed, line
ParsedLink = tuple[str, str, str | None, str | None, str | None, int, int]


class NoteIds:
    """Path -> id of a collection's notes, kept current as the update stores and moves notes:
    those read when it began, and, when it did not read them all (a watcher update of a few
    files in a large vault), any other looked up in the index when first asked."""

    def __init__(
        self, known: Mapping[str, int | None], lookup: Callable[[str], int | None] | None
    ) -> None:
        self._known: dict[str, int | None] = dict(known)
        self._lookup = lookup

    def get(self, path: str) -> int | None:
        if path not in self._known:
            self._known[path] = self._lookup(path) if self._lookup else None
        return self._known[path]

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def __getitem__(self, path: str) -> int:
        found = self.get(path)
        if found is None:
            raise KeyError(path)
        return found

    def __setitem__(self, path: str, doc_id: int) -> None:
        self._known[path] = doc_id

    def __delitem__(self, path: str) -> None:
        self._known[path] = None


class LinkResolver:
    """Resolves a collection's links as the indexer stores its notes (run after `sync_files`).

    `doc_ids` (the collection's indexed notes, NoteIds) is kept current as notes are stored
    and moved. `files` is every file of the folder when the update
    walked it; with many notes to resolve, one index of every file serves them all, else each
    note looks up the files its link names could resolve to.
    """

    def __init__(
        self, collection: str, doc_ids: NoteIds, files: set[str] | None, notes: int
    ) -> None:
        self.collection = collection
        self._doc_ids = doc_ids
        self._files = files
        self._shared = notes > SHARED_INDEX_OVER
        self._index: LinkIndex | None = None
        self._with_info: set[str] = set()  # notes whose headings the shared index holds
        self._claims: list[tuple[int, str, str]] = []
        self._by_name: dict[str, str | None] = {}  # wikilink target -> its one file (shared)

    def flush(self, conn: Any) -> None:
        """Before a commit: links resolved to the files of notes stored since point at them."""
        if self._claims:
            store.claim_links(conn, self.collection, self._claims)
            self._claims = []

    def stored(self, conn: Any, doc_id: int, path: str) -> None:
        """A note was written at `path` (before its links are resolved)."""
        if not self._place(doc_id, path):
            store.mark_subpath_links_pending(conn, doc_id)  # its headings may have changed

    def moved(self, doc_id: int, old: str) -> None:
        """Note `doc_id` left `old` (it is stored at its new path next)."""
        if self._doc_ids.get(old) == doc_id:
            del self._doc_ids[old]
        self._forget_info(old)

    def _place(self, doc_id: int, path: str) -> bool:
        """`path` now holds note `doc_id`; True when it did not before. Links stored earlier
        in this update resolved to the path with the id it had then (none, for a note created
        or moved in later): the next flush gives them this one, whatever the order of notes."""
        self._forget_info(path)
        if self._doc_ids.get(path) == doc_id:
            return False
        self._doc_ids[path] = doc_id
        self._claims.append((doc_id, path, link_key(path)))
        return True

    def rows(
        self, conn: Any, path: str, links: tuple[ParsedLink, ...], own: NoteInfo
    ) -> list[store.LinkRow]:
        """The note's links with their resolution, ready to store; `own` is the note's own
        headings and blocks (for links to itself)."""
        if not links:
            return []
        keys = [link_key(lk[1]) for lk in links]
        index = self._index_for(conn, path, keys)
        paths = [self._path(index, lk[1], path, lk[0] == "markdown") for lk in links]
        subpaths = {
            p
            for p, lk in zip(paths, links, strict=True)
            if p is not None and p in self._doc_ids and (lk[2] or lk[3])
        }
        if subpaths:
            self._add_info(conn, index, path, own, subpaths)
        out: list[store.LinkRow] = []
        for lk, key, target in zip(links, keys, paths, strict=True):
            doc_id = self._doc_ids.get(target) if target else None
            heading_ok = block_ok = None
            if target in subpaths and (lk[2] or lk[3]):
                res = resolve(
                    lk[1], path, index, heading=lk[2], block=lk[3], markdown=lk[0] == "markdown"
                )
                heading_ok, block_ok = _flag(res.heading_found), _flag(res.block_found)
            out.append((*lk, key, target, doc_id, heading_ok, block_ok))
        return out

    def _path(self, index: LinkIndex, target: str, source: str, markdown: bool) -> str | None:
        """Where a link points. With the shared index, a wikilink by name that matches one
        file, or none, resolves the same from every note: resolved once, remembered."""
        if not self._shared or markdown or not target.strip() or target.startswith("."):
            return resolve(target, source, index, markdown=markdown).path
        if target in self._by_name:
            return self._by_name[target]
        res = resolve(target, source, index)
        if res.rule in ("exact", "unique", "unresolved") and not res.alternatives:
            self._by_name[target] = res.path
        return res.path

    def _index_for(self, conn: Any, source: str, keys: list[str]) -> LinkIndex:
        if self._shared:
            if self._index is None:
                files = self._files
                self._index = LinkIndex.build(
                    files if files is not None else store.file_paths(conn, self.collection)
                )
            index = self._index
        else:  # a few notes: only the files their links could resolve to
            index = LinkIndex.build(store.files_with_keys(conn, self.collection, set(keys)))
            self._with_info.clear()
        if source not in index:  # a note must be able to link to itself
            index.add(source)
            self._by_name.clear()  # one more file: names may resolve differently
        return index

    def _add_info(
        self, conn: Any, index: LinkIndex, source: str, own: NoteInfo, paths: set[str]
    ) -> None:
        """Give the index the headings and block ids of the notes subpath links target."""
        wanted = {p: self._doc_ids[p] for p in paths - self._with_info if p != source}
        add_note_info(conn, index, wanted)
        self._with_info.update(wanted)
        if source in paths:
            index.add(source, own)
            self._with_info.add(source)

    def _forget_info(self, path: str) -> None:
        if path in self._with_info and self._index is not None and path in self._index:
            self._index.add(path)  # back to a note whose headings are not loaded
        self._with_info.discard(path)


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def add_note_info(conn: Any, index: LinkIndex, notes: dict[str, int]) -> None:
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
