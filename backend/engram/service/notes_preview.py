"""What a dry-run move reads from disk instead of updating the index.

A real move first brings the index up to date, so every link it rewrites is known and
current. A dry run must change nothing, the index included: it compares the collection's files
with the index (size and modification time, as the indexer does), reads the notes that changed
or appeared since the last update and parses their links in memory, and resolves every link
that could be involved against the files as they are on disk. The preview is then the plan the
real move makes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engram.config import Collection
from engram.store import documents as docs
from engram.store import edits as edit_store
from engram.store import links as link_store
from engram.vault.atomic import Snapshot
from engram.vault.relink import StoredLink
from engram.vault.resolve import LinkIndex, link_key, resolve
from engram.vault.scan import scan

# source path -> (content hash the links were read from, the links)
SourceLinks = dict[str, tuple[str, list[StoredLink]]]


@dataclass(frozen=True)
class DiskView:
    """The collection's files as they are, next to what the index holds."""

    changed: frozenset[str]  # new or modified since the last update
    gone: frozenset[str]  # indexed, no longer on disk
    files: frozenset[str]  # every file the link resolver should see now


def disk_view(conn: Any, col: Collection, max_bytes: int) -> DiskView:
    """Compare the collection's folder with the index, reading nothing but file sizes and
    times. Files the indexer would skip as too large count as files, not as changed notes."""
    states = docs.doc_states(conn, col.name)
    on_disk = {f.rel: f for f in scan(col.path, col.pattern, col.ignore)}
    changed = frozenset(
        rel
        for rel, f in on_disk.items()
        if f.size <= max_bytes
        and ((st := states.get(rel)) is None or (st.mtime_ns, st.size) != (f.mtime_ns, f.size))
    )
    gone = frozenset(states.keys() - on_disk.keys())
    files = (link_store.file_paths(conn, col.name) - gone) | on_disk.keys()
    return DiskView(changed, gone, frozenset(files))


def links_on_disk(
    conn: Any,
    col: Collection,
    old: str,
    new: str,
    doc_id: int | None,
    view: DiskView,
    read: Callable[[str], Snapshot | None],
) -> SourceLinks:
    """Every link a move of `old` to `new` may change, by the note it is written in, as the
    files on disk have them: stored links of unchanged notes re-resolved, and all links of
    changed or new notes parsed from their text."""
    from engram.vault.parse import parse_note

    before = LinkIndex.build(sorted(view.files))
    out: SourceLinks = {}
    keys = (link_key(old), link_key(new))
    for r in edit_store.links_by_keys(conn, col.name, keys, doc_id):
        if r.source in view.changed or r.source in view.gone:
            continue
        found = resolve(r.target, r.source, before, markdown=r.kind == "markdown").path
        link = StoredLink(
            r.kind, r.target, r.heading, r.block, r.display, bool(r.embed), r.line, found
        )
        out.setdefault(r.source, (r.source_hash, []))[1].append(link)
    for rel in sorted(view.changed):
        snap = read(rel)
        if snap is None or snap.text is None:
            continue
        links = [
            StoredLink(
                lk.kind, lk.target, lk.heading, lk.block, lk.display, lk.embed, lk.line,
                resolve(lk.target, rel, before, markdown=lk.kind == "markdown").path,
            )
            for lk in parse_note(snap.text, rel).links
        ]  # fmt: skip
        if links:
            out[rel] = (snap.sha256, links)
    return out
