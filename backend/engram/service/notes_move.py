"""Moving or renaming a note, and rewriting every link that would otherwise break.

The index says which links point at the note (and which links the new name could capture);
`vault.relink` rewrites exactly those, keeping each link's style. Before planning, the
collection is brought up to date, and every note to rewrite must still be the version the
index holds (a stale one is re-indexed and the plan made again), so link positions come from
the text being rewritten. All files change together or none do (`vault.batch.commit`).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

from engram.config import Collection
from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.service.notes import NoteWriteMixin
from engram.service.notes_base import exists, is_dir, plural
from engram.store import edits as edit_store
from engram.vault import batch, names
from engram.vault.batch import Change, Snapshot
from engram.vault.changes import FileChange, NoteChange, unified
from engram.vault.fsio import sha256_hex
from engram.vault.relink import StoredLink, relink
from engram.vault.resolve import link_key

PLAN_ATTEMPTS = 3


class NoteMoveMixin(NoteWriteMixin):
    """note_move."""

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
        col = self.notes_collection(collection)
        self.update([col.name])  # every link of the vault known and current
        old = self.existing_note(col, note)
        new = self._move_target(col, old, new_path)
        if new == old:
            snap = self._snapshot(col, old, expected_hash, editable=False)
            return NoteChange(
                "move", col.name, old, old, snap.sha256, dry_run, False, message="already there"
            )
        for _ in range(PLAN_ATTEMPTS):
            snap = self._snapshot(col, old, expected_hash, editable=False)
            planned = self._plan_move(col, old, new, snap)
            if isinstance(planned, set):  # notes changed since they were indexed
                self._reindex(col, planned)
                continue
            changes, files = planned
            break
        else:
            raise ConflictError("notes keep changing while the move is planned; try again")
        total = sum(f.links for f in files)
        touched = sum(1 for f in files if f.links)
        if not dry_run:
            batch.commit(col.path, changes)
            self._reindex(col, {old, new, *(f.path for f in files)})
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
            folder and not folder.startswith("/") and is_dir(self._vault_file(col, folder))
        ):
            text = f"{folder}/{name}"
        rel = names.check_path(text, keep_name=name)
        if old.lower().endswith(".md"):
            rel = names.note_file(rel)
        target = self._vault_file(col, rel)  # refuses a path leaving the vault
        if exists(target) and rel != old and not _same_file(self._vault_file(col, old), target):
            raise ConflictError(f"{rel} already exists; nothing was moved")
        return rel

    def _plan_move(
        self, col: Collection, old: str, new: str, snap: Snapshot
    ) -> set[str] | tuple[list[Change], list[FileChange]]:
        """The changes of a move, or the notes to re-index first (their text is not the
        indexed one)."""
        conn = self.db.conn
        doc = edit_store.document_id(conn, col.name, old)
        rows = edit_store.links_for_move(
            conn, col.name, old, doc[0] if doc else None, link_key(old), link_key(new)
        )
        by_source: dict[str, list[edit_store.LinkAt]] = defaultdict(list)
        for row in rows:
            by_source[row.source].append(row)
        after = self.vault_index(col, drop=old, add=new)
        changes: list[Change] = []
        files: list[FileChange] = []
        stale: set[str] = set()
        moved_text: str | None = None
        moved_links = 0
        for source, links in sorted(by_source.items()):
            try:
                current = snap if source == old else self._snapshot(col, source, None, False)
            except NotFoundError:  # deleted since it was indexed
                stale.add(source)
                continue
            if current.sha256 != links[0].source_hash:
                stale.add(source)
                continue
            if current.text is None:
                raise InvalidInputError(f"{source} has links to update but {current.why}")
            stored = [
                StoredLink(
                    r.kind, r.target, r.heading, r.block, r.display, bool(r.embed), r.line,
                    r.resolved_path,
                )
                for r in links
            ]  # fmt: skip
            text, n = relink(current.text, source, stored, old, new, after)
            if source == old:
                moved_text, moved_links = (text, n) if n else (None, 0)
            elif n:
                written = current.encode(text)
                changes.append(Change(source, written, current.sha256))
                diff = unified(current.text, text, source, source)
                files.append(
                    FileChange("modify", source, None, current.sha256, sha256_hex(written), diff, n)
                )
        if stale:
            return stale
        data = snap.encode(moved_text) if moved_text is not None else None
        changes.append(Change(new, data, snap.sha256, source=old))
        before = snap.text if snap.text is not None else ""
        diff = unified(before, moved_text if moved_text is not None else before, old, new)
        after_hash = sha256_hex(data) if data is not None else snap.sha256
        files.append(FileChange("move", new, old, snap.sha256, after_hash, diff, moved_links))
        return changes, files


def _same_file(a: object, b: object) -> bool:
    import os

    try:
        return os.path.samefile(a, b)  # type: ignore[arg-type]
    except OSError:
        return False
