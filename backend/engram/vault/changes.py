"""What a note operation did (or, in a dry run, would do): each file touched, with a diff."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

NO_NEWLINE = "\\ No newline at end of file\n"


def unified(before: str | None, after: str | None, old_path: str, new_path: str) -> str:
    """A unified diff (git style names) from `before` to `after`; None is a missing file.

    A pure rename (same text, new path) is the two name lines alone.
    """
    a = f"a/{old_path}" if before is not None else "/dev/null"
    b = f"b/{new_path}" if after is not None else "/dev/null"
    old_lines = _lines(before or "")
    new_lines = _lines(after or "")
    out = []
    for line in difflib.unified_diff(old_lines, new_lines, a, b, n=3):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    if not out and (old_path != new_path or (before is None) != (after is None)):
        out = [f"--- {a}\n", f"+++ {b}\n"]
    return "".join(out)


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


@dataclass(frozen=True)
class FileChange:
    """One file: `action` create | modify | move | trash; hashes before and after; the diff."""

    action: str
    path: str  # where the file is (or would be) afterwards
    old_path: str | None
    before_hash: str | None
    after_hash: str | None
    diff: str
    links: int = 0  # links rewritten in this file

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "action": self.action,
            "path": self.path,
            "oldPath": self.old_path,
            "beforeHash": self.before_hash,
            "afterHash": self.after_hash,
            "linksRewritten": self.links,
            "diff": self.diff,
        }


@dataclass(frozen=True)
class NoteChange:
    """The result of note create / edit / move / delete / link.

    `hash` is the note's content hash afterwards (pass it as the next `expected_hash`);
    `changed` is False when the operation had nothing to do.
    """

    operation: str
    collection: str
    path: str
    old_path: str | None
    hash: str | None
    dry_run: bool
    changed: bool
    files: tuple[FileChange, ...] = ()
    replacements: int | None = None
    links_rewritten: int = 0
    broken_links: tuple[str, ...] = ()  # notes whose links now point nowhere (delete)
    message: str = ""

    @property
    def diff(self) -> str:
        """Every file's diff, one after the other."""
        return "".join(f.diff for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (docs/notes.md)."""
        return {
            "operation": self.operation,
            "collection": self.collection,
            "path": self.path,
            "oldPath": self.old_path,
            "hash": self.hash,
            "dryRun": self.dry_run,
            "changed": self.changed,
            "replacements": self.replacements,
            "linksRewritten": self.links_rewritten,
            "brokenLinks": list(self.broken_links),
            "message": self.message,
            "files": [f.to_dict() for f in self.files],
            "diff": self.diff,
        }
