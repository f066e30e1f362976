"""What a note operation did (or, in a dry run, would do): each file touched, with a diff."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from engram.codec import arg

NO_NEWLINE = "\\ No newline at end of file\n"
# difflib's matcher is quadratic in the lines that differ: past this many, the changed middle
# of a file is shown as one hunk (still a correct diff, only not the smallest one)
MAX_MATCHED_LINES = 2_000
MAX_DIFF_CHARS = 200_000  # per file; a result carries a preview, not a copy of the note
MAX_TOTAL_DIFF_CHARS = 1_000_000  # all files of one operation together


def unified(before: str | None, after: str | None, old_path: str, new_path: str) -> str:
    """A unified diff (git style names) from `before` to `after`; None is a missing file.

    A pure rename (same text, new path) is the two name lines alone. A diff longer than
    MAX_DIFF_CHARS is cut, with a last line saying so.
    """
    a = f"a/{old_path}" if before is not None else "/dev/null"
    b = f"b/{new_path}" if after is not None else "/dev/null"
    old_lines = _lines(before or "")
    new_lines = _lines(after or "")
    out: list[str] = []
    size = 0
    for line in _diff_lines(old_lines, new_lines, a, b):
        text = line if line.endswith("\n") else line + "\n" + NO_NEWLINE
        size += len(text)
        if size > MAX_DIFF_CHARS:
            out.append(f"\\ diff cut at {MAX_DIFF_CHARS:,} characters\n")
            break
        out.append(text)
    if not out and (old_path != new_path or (before is None) != (after is None)):
        out = [f"--- {a}\n", f"+++ {b}\n"]
    return "".join(out)


def _diff_lines(old: list[str], new: list[str], a: str, b: str) -> Iterator[str]:
    """difflib's unified diff, or one hunk over the changed middle when that is large."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    if max(len(old), len(new)) - head - tail <= MAX_MATCHED_LINES:
        yield from difflib.unified_diff(old, new, a, b, n=3)
        return
    start = max(head - 3, 0)
    old_end, new_end = len(old) - max(tail - 3, 0), len(new) - max(tail - 3, 0)
    yield f"--- {a}\n"
    yield f"+++ {b}\n"
    yield f"@@ -{_range(start, old_end)} +{_range(start, new_end)} @@\n"
    yield from (" " + line for line in old[start:head])
    yield from ("-" + line for line in old[head : len(old) - tail])
    yield from ("+" + line for line in new[head : len(new) - tail])
    yield from (" " + line for line in old[len(old) - tail : old_end])


def _range(start: int, end: int) -> str:
    """A hunk's `start,length` (1-based; an empty range names the line before it)."""
    length = end - start
    return f"{start + 1},{length}" if length else f"{start},0"


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
    links: int = arg(0, wire="linksRewritten")  # links rewritten in this file


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

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"diff": "diff"}

    @property
    def diff(self) -> str:
        """Every file's diff, one after the other (cut at MAX_TOTAL_DIFF_CHARS)."""
        out, size = [], 0
        for f in self.files:
            size += len(f.diff)
            if size > MAX_TOTAL_DIFF_CHARS:
                out.append(f"\\ diff cut at {MAX_TOTAL_DIFF_CHARS:,} characters\n")
                break
            out.append(f.diff)
        return "".join(out)
