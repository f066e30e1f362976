"""Moving or renaming a note, and rewriting every link that would otherwise break.

The index says which links point at the note (and which links the new name could capture);
`vault.relink` rewrites exactly those, keeping each link's style. Before planning, the
collection is brought up to date, and every note to rewrite must still be the version the
index holds (a stale one is re-indexed and the plan made again), so link positions come from
the text being rewritten. All files change together or none do (`vault.journal.commit`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING

from engram.config import Collection
from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.service.notes_base import exists, is_dir, plural
from engram.service.notes_preview import DiskView, SourceLinks, disk_view, links_on_disk
from engram.store import edits as edit_store
from engram.vault import journal, names
from engram.vault.atomic import Snapshot
from engram.vault.canvas_relink import relink_canvas
from engram.vault.changes import FileChange, NoteChange, unified
from engram.vault.fsio import sha256_hex
from engram.vault.journal import Change
from engram.vault.kinds import is_canvas
from engram.vault.relink import StoredLink, relink
from engram.vault.resolve import LinkIndex, link_key

if TYPE_CHECKING:
    from engram.index.indexer import UpdateReport
    from engram.service.core import Core
    from engram.service.notes_base import NoteAccess

PLAN_ATTEMPTS = 3


class NoteMover:
    """note_move: over the index `core`, through the note `access` every write shares,
    bringing the collection up to date with `update` before planning."""

    def __init__(self, core: Core, access: NoteAccess, update: Callable[..., UpdateReport]) -> None:
        self._core = core
        self._access = access
        self._update = update

    def note_move(
        self,
        note: str,
        new_path: str,
        *,
        expected_hash: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Move or rename a note (or any vault file) to `new_path` (vault-relative; a trailing
        `/` or an existing folder keeps the name) and rewrite every link to it, all at once."""
        col = self._access.notes_collection(collection)
        # A move brings the index up to date (every link of the vault known and current); a
        # dry run changes nothing, the index included, and reads what changed from disk.
        view = self._disk_view(col) if dry_run else None
        if view is None:
            self._update([col.name])
        old = self._access.existing_note(col, note)
        new = self._move_target(col, old, new_path)
        if new == old:
            snap = self._access.snapshot(col, old, expected_hash, editable=False)
            return NoteChange(
                "move", col.name, old, old, snap.sha256, dry_run, False, message="already there"
            )
        for _ in range(PLAN_ATTEMPTS):
            snap = self._access.snapshot(col, old, expected_hash, editable=False)
            planned = self._plan_move(col, old, new, snap, view)
            if isinstance(planned, set):  # notes changed since they were indexed (or read)
                if view is None:
                    self._access.reindex(col, planned)
                else:
                    view = self._disk_view(col)
                continue
            changes, files = planned
            break
        else:
            raise ConflictError("notes keep changing while the move is planned; try again")
        total = sum(f.links for f in files)
        touched = sum(1 for f in files if f.links)
        if not dry_run:
            journal.commit(col.path, changes, f"note move {old} -> {new}")
            self._access.reindex(col, {old, new, *(f.path for f in files)})
        return NoteChange(
            "move",
            col.name,
            new,
            old,
            files[-1].after_hash,
            dry_run,
            True,
            tuple(files),
            links_rewritten=total,
            message=(
                f"{old} -> {new}; {plural(total, 'link')} rewritten in {plural(touched, 'note')}"
            ),
        )

    def _move_target(self, col: Collection, old: str, new_path: str) -> str:
        text = (new_path or "").replace("\\", "/").strip()
        if not text:
            raise InvalidInputError("where to? give the new path")
        name = posixpath.basename(old)
        folder = text.rstrip("/")
        if text.endswith("/") or (
            folder and not folder.startswith("/") and is_dir(self._access.vault_file(col, folder))
        ):
            text = f"{folder}/{name}"
        rel = names.check_path(text, keep_name=name)
        if old.lower().endswith(".md"):
            rel = names.note_file(rel)
        target = self._access.vault_file(col, rel)  # refuses a path leaving the vault
        if (
            exists(target)
            and rel != old
            and not _same_file(self._access.vault_file(col, old), target)
        ):
            raise ConflictError(f"{rel} already exists; nothing was moved")
        return rel

    def _disk_view(self, col: Collection) -> DiskView:
        return disk_view(self._core.db.conn, col, self._core.settings.max_file_bytes)

    def _plan_move(
        self, col: Collection, old: str, new: str, snap: Snapshot, view: DiskView | None
    ) -> set[str] | tuple[list[Change], list[FileChange]]:
        """The changes of a move, or the notes to re-index (or, for a dry run over `view`,
        to read) again first: their text is not the one the links were read from."""
        conn = self._core.db.conn
        doc = edit_store.document_id(conn, col.name, old)
        doc_id = doc[0] if doc else None
        if view is None:
            by_source = self._indexed_links(col, old, new, doc_id)
            after = self._access.vault_index(col, drop=old, add=new)
        else:
            by_source = links_on_disk(conn, col, old, new, doc_id, view, self._read_if_there(col))
            after = LinkIndex.build(sorted((view.files - {old}) | {new}))
        changes: list[Change] = []
        files: list[FileChange] = []
        stale: set[str] = set()
        moved_text: str | None = None
        moved_links = 0
        for source, (read_hash, stored) in sorted(by_source.items()):
            try:
                current = snap if source == old else self._access.snapshot(col, source, None, False)
            except NotFoundError:  # deleted since it was indexed
                stale.add(source)
                continue
            if current.sha256 != read_hash:
                stale.add(source)
                continue
            if current.text is None:
                raise InvalidInputError(f"{source} has links to update but {current.why}")
            rewrite = relink_canvas if is_canvas(source) else relink
            text, n = rewrite(current.text, source, stored, old, new, after)
            if source == old:
                moved_text, moved_links = (text, n) if n else (None, 0)
            elif n:
                written = self._access.bounded(source, current.encode(text))
                changes.append(Change(source, written, current.sha256))
                diff = unified(current.text, text, source, source)
                files.append(
                    FileChange("modify", source, None, current.sha256, sha256_hex(written), diff, n)
                )
        if stale:
            return stale
        data = None if moved_text is None else self._access.bounded(new, snap.encode(moved_text))
        changes.append(Change(new, data, snap.sha256, source=old))
        before = snap.text if snap.text is not None else ""
        diff = unified(before, moved_text if moved_text is not None else before, old, new)
        after_hash = sha256_hex(data) if data is not None else snap.sha256
        files.append(FileChange("move", new, old, snap.sha256, after_hash, diff, moved_links))
        return changes, files

    def _indexed_links(
        self, col: Collection, old: str, new: str, doc_id: int | None
    ) -> SourceLinks:
        """The stored links a move may change, by note, with the hash they were indexed at."""
        rows = edit_store.links_for_move(
            self._core.db.conn, col.name, old, doc_id, link_key(old), link_key(new)
        )
        out: SourceLinks = {}
        for r in rows:
            link = StoredLink(
                r.kind, r.target, r.heading, r.block, r.display, bool(r.embed), r.line,
                r.resolved_path,
            )  # fmt: skip
            out.setdefault(r.source, (r.source_hash, []))[1].append(link)
        return out

    def _read_if_there(self, col: Collection) -> Callable[[str], Snapshot | None]:
        def read(rel: str) -> Snapshot | None:
            try:
                return self._access.snapshot(col, rel, None, False)
            except (NotFoundError, InvalidInputError):
                return None

        return read


def _same_file(a: object, b: object) -> bool:
    import os

    try:
        return os.path.samefile(a, b)  # type: ignore[arg-type]
    except OSError:
        return False
