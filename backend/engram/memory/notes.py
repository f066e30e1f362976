"""Reading and writing notes inside a vault without ever losing anybody's words.

Every write names the hash of the version it was computed from. If the file changed since,
the new text goes to a conflict copy `<name> (conflict YYYY-MM-DD HHMMSS).md` beside it and
ConflictError says where: both versions survive, nothing is overwritten. Generated notes
(daily notes, the ledger) instead re-read and re-merge, because their merge keeps the other
writer's text anyway.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engram.errors import ConflictError
from engram.vault.fsio import (
    UnsafePathError,
    atomic_write_text,
    decode,
    is_binary,
    safe_join,
    sha256_hex,
)

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

    def __init__(self, root: Path, clock: Callable[[], dt.datetime]) -> None:
        self.root = root
        self.clock = clock

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

    def write(self, rel: str, text: str, expected: str, bom: bool = False) -> str:
        """Write `text` if the file still has hash `expected` ("" = must not exist).

        On a mismatch the text goes to a conflict copy and NoteConflict is raised.
        """
        target = self.path(rel)
        try:
            return atomic_write_text(target, (BOM if bom else "") + text, expected)
        except ConflictError:
            copy = self.conflict_name(rel)
            atomic_write_text(self.path(copy), text, "")
            raise NoteConflict(rel, copy) from None

    def merge(self, rel: str, build: Callable[[str | None], str]) -> str | None:
        """Re-read, rebuild and write until no one else wrote in between; None if unchanged."""
        for _ in range(MERGE_ATTEMPTS):
            current = self.read(rel)
            new = build(current.text if current else None)
            if current is not None and new == current.text:
                return None
            try:
                expected = current.sha256 if current else ""
                bom = current.bom if current else False
                return atomic_write_text(self.path(rel), (BOM if bom else "") + new, expected)
            except ConflictError:
                continue
        raise ConflictError(f"{rel} keeps changing; try again in a moment")

    def free_name(self, folder: str, name: str) -> str:
        """`folder/name`, or `folder/name-2.md`... when that file exists."""
        stem, suffix = name[:-3], ".md"
        rel = f"{folder}/{name}"
        n = 2
        while self.exists(rel):
            rel = f"{folder}/{stem}-{n}{suffix}"
            n += 1
        return rel

    def move(self, rel: str, new_rel: str, expected: str) -> str:
        """Move a note (no overwrite) if it still has hash `expected`; return where it went."""
        source = self.path(rel)
        current = self.read(rel)
        if current is None or current.sha256 != expected:
            raise ConflictError(f"{rel} changed since it was read; not moved")
        folder, name = new_rel.rsplit("/", 1)
        new_rel = self.free_name(folder, name)
        target = self.path(new_rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)  # fails instead of overwriting; then drop the old name
        except FileExistsError:
            raise ConflictError(f"{new_rel} appeared while moving {rel}; not moved") from None
        except OSError:  # no hard links on this file system
            if target.exists():
                raise ConflictError(f"{new_rel} exists; {rel} not moved") from None
            os.rename(source, target)
            return new_rel
        source.unlink()
        return new_rel

    def conflict_name(self, rel: str) -> str:
        """A free `<name> (conflict YYYY-MM-DD HHMMSS).md` beside `rel`."""
        path = PurePosixPath(rel)
        stamp = self.clock().astimezone(dt.UTC).strftime("%Y-%m-%d %H%M%S")
        base = f"{path.stem} (conflict {stamp})"
        candidate, n = path.with_name(f"{base}{path.suffix}"), 2
        while self.exists(candidate.as_posix()):
            candidate = path.with_name(f"{path.stem} (conflict {stamp} {n}){path.suffix}")
            n += 1
        return candidate.as_posix()
