"""Notes by name for `get` and `multi-get`: a title, an alias, a file name or a `[[wikilink]]`
(with `#heading` or `#^block`), resolved as the graph commands resolve them (graph/notes.py),
in the default vault first; and the lines a heading or a block id covers in a note."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram.errors import NotFoundError
from engram.vault.parse import Link, wikilink
from engram.vault.resolve import normalize_heading

if TYPE_CHECKING:
    from engram.graph.notes import NoteFinder

_WIKILINK = re.compile(r"^!?\[\[(.+?)\]\]$", re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
SUGGESTIONS = 5


@dataclass(frozen=True)
class Named:
    """A note found by name: its collection and collection-relative path."""

    collection: str
    path: str


def as_link(ref: str) -> Link | None:
    """The link `ref` is written as (`[[Name#Heading|shown]]`, `![[Name#^block]]`), or None."""
    m = _WIKILINK.match(ref.strip())
    return wikilink(m.group(1), False, 0) if m else None


def note_name(ref: str) -> str:
    """The note a ref names: a wikilink's target, else the ref itself."""
    link = as_link(ref)
    return link.target if link is not None else ref.strip()


def find_named(text: str, collections: Sequence[str], finder: Callable[[str], NoteFinder]) -> Named:
    """The note `text` names in the first of `collections` (the default vault first) that has
    exactly one such note; NotFoundError with "did you mean" candidates otherwise."""
    name = note_name(text)
    if not name:
        raise NotFoundError(f"{text!r} names no note")
    suggestions: list[str] = []  # as `collection/path`, a ref `get` takes as it is
    ambiguous = False
    for collection in collections:
        try:
            return Named(collection, finder(collection).find(name).path)
        except NotFoundError as exc:
            ambiguous = ambiguous or exc.message.startswith("several notes match")
            suggestions += [f"{collection}/{s}" for s in exc.suggestions]
    listed = list(dict.fromkeys(suggestions))[:SUGGESTIONS]
    if ambiguous:
        raise NotFoundError(f"several notes match {name!r}; give a path", listed)
    raise NotFoundError(f"no indexed document matches {name!r}", listed)


def section(text: str, link: Link) -> tuple[int, int] | None:
    """(first line, number of lines) of the heading's section or the block's paragraph a
    link points to, 1-based; None when the link names neither."""
    lines = text.split("\n")
    if link.block:
        return _block(lines, link.block)
    if link.heading:
        return _heading(lines, link.heading)
    return None


def _heading(lines: list[str], wanted: str) -> tuple[int, int]:
    """The heading's line to the line before the next heading of its level or higher; a
    subpath `A#B` is the heading B under heading A, as Obsidian reads it."""
    parts = [normalize_heading(p) for p in wanted.split("#") if p.strip()]
    found: tuple[int, int] | None = None  # (index, level)
    depth, fenced = 0, False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m is None:
            continue
        level = len(m.group(1))
        if found is not None:
            if level <= found[1]:
                return found[0] + 1, i - found[0]
            continue
        if depth < len(parts) and normalize_heading(m.group(2)) == parts[depth]:
            depth += 1
            if depth == len(parts):
                found = (i, level)
    if found is None:
        raise NotFoundError(f"no heading {wanted!r} in the note")
    return found[0] + 1, len(lines) - found[0]


def _block(lines: list[str], block: str) -> tuple[int, int]:
    """The paragraph ending in `^block` (or the line holding it)."""
    mark = re.compile(rf"(?:^|\s)\^{re.escape(block)}\s*$")
    for i, line in enumerate(lines):
        if mark.search(line):
            start = i
            while start > 0 and lines[start - 1].strip() and not _HEADING.match(lines[start]):
                start -= 1
            return start + 1, i - start + 1
    raise NotFoundError(f"no block ^{block} in the note")
