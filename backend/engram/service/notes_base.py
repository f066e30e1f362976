"""What every note write shares: which collection, which file, its snapshot and precondition,
one-file writes, and re-indexing what was touched."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.config import Collection
from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.store import links as link_store
from engram.vault import atomic, journal, names
from engram.vault.atomic import Snapshot
from engram.vault.changes import FileChange, NoteChange, unified
from engram.vault.fsio import UnsafePathError, safe_join, sha256_hex
from engram.vault.journal import Change
from engram.vault.resolve import LinkIndex, resolve
from engram.vault.scan import hidden_or_ignored_dir

if TYPE_CHECKING:
    from engram.index.indexer import UpdateReport
    from engram.service.core import Core
    from engram.service.graph import GraphService

_HEX = re.compile(r"^[0-9a-f]{6,64}$")
MAX_REF_CHARS = 4096


class NoteAccess:
    """notes_collection, existing_note, vault_index, and what every note write shares: over
    the index `core`, finding notes with the `graph` service, re-indexing with `update`."""

    def __init__(
        self, core: Core, graph: GraphService, update: Callable[..., UpdateReport]
    ) -> None:
        self._core = core
        self._graph = graph
        self._update = update

    def notes_collection(self, collection: str | None = None) -> Collection:
        """The collection to write in: the named one, the default vault, or the only one."""
        if collection:
            return self._core.require_collection(collection)
        default = self._core.settings.default_vault
        if default and self._core.settings.collection(default) is not None:
            return self._core.require_collection(default)
        return self._core.require_collection(self._graph.graph_collection())

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
        _, vault = self._graph.vault_graph(col.name)
        found = _exact_note(vault.finder, text)
        if not is_file(self.vault_file(col, found)):
            raise NotFoundError(f"{found} is indexed but no longer on disk (run engram update)")
        return self._allowed(found)

    def vault_index(
        self, col: Collection, drop: str | None = None, add: str | None = None
    ) -> LinkIndex:
        """Every file of the collection's folder as the resolver sees it (optionally with one
        path taken out and one added: the vault after a move)."""
        files = link_store.file_paths(self._core.db.conn, col.name)
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

    def vault_file(self, col: Collection, rel: str) -> Path:
        """The file of a vault-relative path, never outside the vault."""
        return safe_join(col.path, rel)

    def snapshot(self, col: Collection, rel: str, expected: str | None, editable: bool) -> Snapshot:
        """The file as read now, checked against the caller's `expected` hash."""
        try:
            snap = atomic.snapshot(self.vault_file(col, rel))
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(f"no file {rel} in {col.name}") from None
        except IsADirectoryError:
            raise InvalidInputError(f"{rel} is a folder, not a note") from None
        if expected is not None:
            check_expected(rel, snap.sha256, expected)
        if editable and snap.text is None:
            raise InvalidInputError(f"{rel} cannot be edited as text: {snap.why}")
        return snap

    def write_one(
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
        """Write one file's new text (unless `dry_run`) and say what changed."""
        changed = after != before
        data = self.bounded(rel, snap.encode(after))
        sha = sha256_hex(data) if changed else snap.sha256
        files = (
            (FileChange("modify", rel, None, snap.sha256, sha, unified(before, after, rel, rel)),)
            if changed
            else ()
        )
        if changed and not dry_run:
            journal.commit(col.path, [Change(rel, data, snap.sha256)], f"note {operation} {rel}")
            self.reindex(col, {rel})
        return NoteChange(
            operation, col.name, rel, None, sha, dry_run, changed, files, replacements
        )

    def bounded(self, rel: str, data: bytes) -> bytes:
        """`data`, unless it is larger than a note may be (InvalidInputError)."""
        limit = self._core.settings.max_file_bytes
        if len(data) > limit:
            raise InvalidInputError(
                f"{rel} would be {len(data):,} bytes, over the {limit:,}-byte limit for a note "
                "(max_file_bytes)",
                "write less at a time, or raise max_file_bytes in the config file",
            )
        return data

    def reindex(self, col: Collection, paths: Iterable[str]) -> None:
        """Index the touched paths now, so search and the graph see the write at once."""
        self._update([col.name], only_paths={col.name: set(paths)})


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
