"""What every note write shares: which collection, which file, its snapshot and precondition,
one-file writes, and re-indexing what was touched."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engram.config import Collection
from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.service.retrieval import RetrievalMixin
from engram.store import links as link_store
from engram.vault import atomic, journal, names
from engram.vault.atomic import Snapshot
from engram.vault.changes import FileChange, NoteChange, unified
from engram.vault.fsio import UnsafePathError, safe_join, sha256_hex
from engram.vault.journal import Change
from engram.vault.resolve import LinkIndex, resolve
from engram.vault.scan import hidden_or_ignored_dir

_HEX = re.compile(r"^[0-9a-f]{6,64}$")
MAX_REF_CHARS = 4096


class NoteAccessMixin(RetrievalMixin):
    """notes_collection, existing_note, vault_index, and the write helpers."""

    def notes_collection(self, collection: str | None = None) -> Collection:
        """The collection to write in: the named one, the default vault, or the only one."""
        if collection:
            return self.require_collection(collection)
        default = self.settings.default_vault
        if default and self.settings.collection(default) is not None:
            return self.require_collection(default)
        return self.require_collection(self.graph.graph_collection())

    def existing_note(self, col: Collection, note: str) -> str:
        """The vault-relative path of an existing file named by a path (vault-relative, with or
        without `.md`, or absolute inside the vault), an engram:// URI, or a note's exact
        name, title or alias. Anything ambiguous or outside the vault is an error."""
        text = (note or "").strip().removeprefix(f"engram://{col.name}/")
        if not text:
            raise InvalidInputError("a note is required")
        if len(text) > MAX_REF_CHARS:
            raise UnsafePathError("path too long for a file system")
        root = col.path.resolve()
        given = Path(text).expanduser() if text.startswith("~/") else Path(text)
        if given.is_absolute():
            full = given.resolve()
            if root in full.parents:
                text = full.relative_to(root).as_posix()
            elif exists(root / text.lstrip("/")):
                text = text.lstrip("/")  # a vault-absolute path, as links write them
            else:
                raise UnsafePathError(f"{note} is outside the vault")
        for spelling in (text, names.note_file(text)):
            try:
                path = safe_join(root, spelling)
            except (OSError, ValueError) as exc:  # names the OS cannot even look up
                raise UnsafePathError(f"unusable path: {exc}") from None
            if is_file(path):
                return self._allowed(path.relative_to(root).as_posix())
        _, vault = self.graph.vault_graph(col.name)
        found = _exact_note(vault.finder, text)
        if not is_file(self._vault_file(col, found)):
            raise NotFoundError(f"{found} is indexed but no longer on disk (run engram update)")
        return self._allowed(found)

    def vault_index(
        self, col: Collection, drop: str | None = None, add: str | None = None
    ) -> LinkIndex:
        """Every file of the collection's folder as the resolver sees it (optionally with one
        path taken out and one added: the vault after a move)."""
        files = link_store.file_paths(self.db.conn, col.name)
        files.discard(drop or "")
        if add:
            files.add(add)
        return LinkIndex.build(sorted(files))

    def _allowed(self, rel: str) -> str:
        if any(hidden_or_ignored_dir(p) for p in rel.split("/")[:-1]):
            raise InvalidInputError(
                f"{rel}: hidden and tool folders (.obsidian, .trash) are off limits"
            )
        return rel

    def _vault_file(self, col: Collection, rel: str) -> Path:
        return safe_join(col.path, rel)

    def _snapshot(
        self, col: Collection, rel: str, expected: str | None, editable: bool
    ) -> Snapshot:
        try:
            snap = atomic.snapshot(self._vault_file(col, rel))
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(f"no file {rel} in {col.name}") from None
        except IsADirectoryError:
            raise InvalidInputError(f"{rel} is a folder, not a note") from None
        if expected is not None:
            check_expected(rel, snap.sha256, expected)
        if editable and snap.text is None:
            raise InvalidInputError(f"{rel} cannot be edited as text: {snap.why}")
        return snap

    def _write_one(
        self,
        col: Collection,
        operation: str,
        rel: str,
        snap: Snapshot,
        before: str,
        after: str,
        dry_run: bool,
        replacements: int | None = None,
    ) -> NoteChange:
        changed = after != before
        data = self._bounded(rel, snap.encode(after))
        sha = sha256_hex(data) if changed else snap.sha256
        files = (
            (FileChange("modify", rel, None, snap.sha256, sha, unified(before, after, rel, rel)),)
            if changed
            else ()
        )
        if changed and not dry_run:
            journal.commit(col.path, [Change(rel, data, snap.sha256)], f"note {operation} {rel}")
            self._reindex(col, {rel})
        return NoteChange(
            operation, col.name, rel, None, sha, dry_run, changed, files, replacements
        )

    def _bounded(self, rel: str, data: bytes) -> bytes:
        """`data`, unless it is larger than a note may be (InvalidInputError)."""
        limit = self.settings.max_file_bytes
        if len(data) > limit:
            raise InvalidInputError(
                f"{rel} would be {len(data):,} bytes, over the {limit:,}-byte limit for a note "
                "(max_file_bytes)",
                "write less at a time, or raise max_file_bytes in the config file",
            )
        return data

    def _reindex(self, col: Collection, paths: Iterable[str]) -> None:
        """Index the touched paths now, so search and the graph see the write at once."""
        self.update([col.name], only_paths={col.name: set(paths)})


def check_expected(rel: str, actual: str, expected: str) -> None:
    """ConflictError unless `actual` (sha256 hex) starts with `expected` (>= 6 hex digits)."""
    wanted = expected.strip().lower().removeprefix("#")
    if not _HEX.match(wanted):
        raise InvalidInputError(
            "expected_hash must be the note's sha256 or its docid (at least 6 hex digits)"
        )
    if not actual.startswith(wanted):
        raise ConflictError(
            f"{rel} changed since it was read (expected {wanted[:12]}, found "
            f"{actual[:12]}); nothing was written",
            "read the note again and retry with its new hash",
        )


def _exact_note(finder: Any, text: str) -> str:
    """A note named exactly (path, name, alias or title of one note only); else an error with
    the likely notes. Writes never act on a partial or fuzzy match."""
    from engram.graph.notes import EXACT
    from engram.vault.resolve import candidates

    hit = resolve(text, "", finder.index, aliases=True)
    if hit.path is not None and (hit.alternatives == 0 or hit.rule == "exact"):
        return str(hit.path)
    found = candidates(text, finder.index, limit=10)
    sure = sorted({c.path for c in found if c.score >= EXACT})
    if len(sure) == 1:
        return sure[0]
    listed = (sure or [c.path for c in found])[:5]
    if len(sure) > 1 or (hit.path is not None and hit.alternatives):
        raise NotFoundError(f"several notes match {text!r}; give the path", listed)
    raise NotFoundError(f"no note {text!r}", listed)


def plural(n: int, word: str) -> str:
    """`1 link`, `2 links`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def is_file(path: Path) -> bool:
    """Path.is_file, False for names the OS cannot even look up (too long, bad bytes)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: Path) -> bool:
    """Path.is_dir, False for names the OS cannot even look up."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def exists(path: Path) -> bool:
    """Path.exists; a name the OS cannot look up does not exist."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False
