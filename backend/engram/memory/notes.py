"""Reading and writing notes inside a vault without ever losing anybody's words.

Every write names the hash of the version it was computed from and goes through the journaled
writer (`vault.journal`): all or nothing, even across a crash. If the file changed since,
the new text goes to a conflict copy `<name> (conflict YYYY-MM-DD HHMMSS).md` beside it and
ConflictError says where: both versions survive, nothing is overwritten. Generated notes
(daily notes, the ledger) instead re-read and re-merge, because their merge keeps the other
writer's text anyway.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engram.errors import ConflictError, InvalidInputError
from engram.vault import journal
from engram.vault.fsio import UnsafePathError, decode, is_binary, safe_join, sha256_hex
from engram.vault.names import fit_name

BOM = "\ufeff"
CONFLICT_NAME = re.compile(r" \(conflict \d{4}-\d{2}-\d{2} \d{6}(?: \d+)?\)$")
MERGE_ATTEMPTS = 3


@dataclass(frozen=True)
class NoteText:
    """A note as read: its text, the hash of its bytes, and whether it began with a BOM."""

    text: str
    sha256: str
    bom: bool = False


class NoteConflict(ConflictError):
    """The note changed under us; our version was saved to `copy` (vault-relative)."""

    def __init__(self, rel: str, copy: str) -> None:
        super().__init__(
            f"{rel} changed while Engram was updating it; your edit is kept and Engram's "
            f"version was saved to {copy}",
            "compare the two notes and merge them by hand",
        )
        self.rel = rel
        self.copy = copy


def is_conflict_copy(rel: str) -> bool:
    """True for a conflict copy's path (never adopted as a fact of its own)."""
    return bool(CONFLICT_NAME.search(PurePosixPath(rel).stem))


class Notes:
    """Notes of one vault, addressed by vault-relative POSIX paths."""

    def __init__(
        self, root: Path, clock: Callable[[], dt.datetime], max_bytes: int | None = None
    ) -> None:
        self.root = root
        self.clock = clock
        self.max_bytes = max_bytes  # the largest note a write may produce

    def path(self, rel: str) -> Path:
        """The file for a vault-relative path; refuses paths that leave the vault."""
        return safe_join(self.root, rel)

    def relative(self, path: str) -> str:
        """A vault-relative path from a relative or absolute one; refuses paths outside."""
        try:
            given = Path(path).expanduser()
        except RuntimeError:  # ~user of nobody on this machine
            raise UnsafePathError(f"{path} is not inside the vault") from None
        if given.is_absolute():
            try:
                return given.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                raise UnsafePathError(f"{path} is not inside the vault") from None
        self.path(path)  # refuses ../ escapes
        return PurePosixPath(path).as_posix()

    def read(self, rel: str) -> NoteText | None:
        """The note, or None when there is no such file (binary files count as none)."""
        try:
            data = self.path(rel).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        if is_binary(data):
            return None
        text, _ = decode(data)
        return NoteText(text, sha256_hex(data), data.startswith(BOM.encode()))

    def exists(self, rel: str) -> bool:
        """True when the file exists."""
        return self.path(rel).exists()

    def write(
        self, rel: str, text: str, expected: str, bom: bool = False, to: str | None = None
    ) -> str:
        """Write `text` if the file still has hash `expected` ("" = must not exist); with
        `to` (a free path, see `destination`) the note moves there in the same write.

        On a mismatch the text goes to a conflict copy and NoteConflict is raised.
        """
        data = self._encode(rel, text, bom)
        change = journal.Change(rel, data, expected)
        if to is not None and to != rel:
            change = journal.Change(to, data, expected, source=rel)
        try:
            self.commit([change], f"write {rel}")
        except ConflictError:
            copy = self.conflict_name(rel)
            self.commit([journal.Change(copy, text.encode("utf-8"), "")], f"conflict copy {rel}")
            raise NoteConflict(rel, copy) from None
        return sha256_hex(data)

    def commit(self, changes: list[journal.Change], label: str) -> None:
        """Several changes at once, all or none (`vault.journal`); ConflictError as is."""
        journal.commit(self.root, changes, label)

    def commit_one(self, rel: str, text: str, expected: str, bom: bool = False) -> str:
        """Write one note if it still has hash `expected`; ConflictError (no copy) if not."""
        change = self.change(rel, text, expected, bom)
        self.commit([change], f"write {rel}")
        return sha256_hex(change.data or b"")

    def change(self, rel: str, text: str, expected: str, bom: bool = False) -> journal.Change:
        """One note's new text, for `commit` (size checked)."""
        return journal.Change(rel, self._encode(rel, text, bom), expected)

    def merge(self, rel: str, build: Callable[[str | None], str]) -> str | None:
        """Re-read, rebuild and write until no one else wrote in between; None if unchanged."""
        for _ in range(MERGE_ATTEMPTS):
            current = self.read(rel)
            new = build(current.text if current else None)
            if current is not None and new == current.text:
                return None
            expected = current.sha256 if current else ""
            change = self.change(rel, new, expected, current.bom if current else False)
            try:
                self.commit([change], f"write {rel}")
            except ConflictError:
                continue
            return sha256_hex(change.data or b"")
        raise ConflictError(f"{rel} keeps changing; try again in a moment")

    def free_name(self, folder: str, name: str) -> str:
        """`folder/name`, or `folder/name-2.md`... when that file exists."""
        stem, suffix = name[:-3], ".md"
        rel = f"{folder}/{name}"
        n = 2
        while self.exists(rel):
            rel = f"{folder}/{fit_name(stem, f'-{n}{suffix}')}"
            n += 1
        return rel

    def move(self, rel: str, new_rel: str, expected: str) -> str:
        """Move a note (no overwrite) if it still has hash `expected`; return where it went."""
        folder, name = new_rel.rsplit("/", 1)
        target = self.free_name(folder, name)
        self.commit([journal.Change(target, None, expected, source=rel)], f"move {rel}")
        return target

    def destination(self, rel: str, folder: str) -> str:
        """Where `rel` goes in `folder`: its own name, numbered when taken."""
        name = PurePosixPath(rel).name
        return rel if str(PurePosixPath(rel).parent) == folder else self.free_name(folder, name)

    def _encode(self, rel: str, text: str, bom: bool) -> bytes:
        data = ((BOM if bom else "") + text).encode("utf-8")
        if self.max_bytes is not None and len(data) > self.max_bytes:
            raise InvalidInputError(
                f"{rel} would be {len(data):,} bytes, over the {self.max_bytes:,}-byte limit "
                "for a note (max_file_bytes)",
                "write less, or raise max_file_bytes in the config file",
            )
        return data

    def conflict_name(self, rel: str) -> str:
        """A free `<name> (conflict YYYY-MM-DD HHMMSS).md` beside `rel`."""
        path = PurePosixPath(rel)
        stamp = self.clock().astimezone(dt.UTC).strftime("%Y-%m-%d %H%M%S")
        candidate = path.with_name(fit_name(path.stem, f" (conflict {stamp}){path.suffix}"))
        n = 2
        while self.exists(candidate.as_posix()):
            tail = f" (conflict {stamp} {n}){path.suffix}"
            candidate = path.with_name(fit_name(path.stem, tail))
            n += 1
        return candidate.as_posix()
