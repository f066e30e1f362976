"""`engram tags`: every tag with its number of notes, as Obsidian's tag pane shows them.

Tags are counted as Obsidian matches them (store/tags.py): case ignored, and a note with
`#project/alpha` counts for `project` too, once however many of its tags are nested there.
Each level of a tag is shown in its most used spelling (by notes; a tie goes to the spelling
seen first, in path order), so `#Project` and `#project` are one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram.store import tags as store

if TYPE_CHECKING:
    from engram.service.core import Core

SORTS: tuple[str, ...] = ("name", "count")
# levels of a tag listed apart; the last holds the rest of a deeper tag, so a hostile tag of
# thousands of levels gives MAX_LEVELS names, not thousands of ever longer ones
MAX_LEVELS = 16


@dataclass(frozen=True)
class TagCount:
    """One tag of the tag pane: its name and how many notes carry it."""

    name: str  # without '#'; nested levels joined by '/', each in its most used spelling
    count: int  # notes with this tag or one nested under it: what `tag:NAME` finds


@dataclass(frozen=True)
class TagList:
    """Every tag with its count; each parent comes right before the tags nested under it."""

    tags: tuple[TagCount, ...]
    notes: int  # notes with at least one tag


def tag_list(core: Core, collections: Sequence[str] = (), sort: str = "name") -> TagList:
    """Every tag of the collections (all: empty) with its number of notes, nested tags
    after their parent; siblings by name, or by count (most first) with `sort="count"`."""
    from engram.errors import InvalidInputError

    if sort not in SORTS:
        raise InvalidInputError(f"sort must be one of {', '.join(SORTS)}")
    for name in collections:
        core.require_collection(name)
    with core.db.read() as conn:
        rows = store.note_tags(conn, tuple(collections))
    return count_tags(rows, sort)


def count_tags(rows: Iterable[tuple[int, str, str, int]], sort: str = "name") -> TagList:
    """The tag list from `store.tags.note_tags` rows (note id, key, spelling, line)."""
    rows = list(rows)
    notes: dict[str, set[int]] = {}
    children: dict[str, set[str]] = {}  # "" holds the top-level tags
    for doc_id, key, _tag, _line in rows:
        parent = ""
        for level in _levels(key):
            notes.setdefault(level, set()).add(doc_id)
            children.setdefault(parent, set()).add(level)
            parent = level
    names = spellings(rows)

    def order(key: str) -> tuple[int, str, str]:
        return (-len(notes[key]) if sort == "count" else 0, names[key].lower(), key)

    out: list[TagCount] = []
    stack = sorted(children.get("", ()), key=order, reverse=True)
    while stack:  # depth first, parents before the tags nested under them
        key = stack.pop()
        out.append(TagCount(names[key], len(notes[key])))
        stack += sorted(children.get(key, ()), key=order, reverse=True)
    tagged = {doc_id for doc_id, key, _tag, _line in rows if key}
    return TagList(tuple(out), len(tagged))


def spellings(rows: Iterable[tuple[int, str, str, int]]) -> dict[str, str]:
    """How each tag and each parent level is shown, by key: its parent's name, then `/` and
    the level's own most used spelling among the notes under it (rows in path order, as
    `store.tags.note_tags` gives them: a tie goes to the first)."""
    # level key -> (parent level key, spelling of its own part -> notes); dicts keep the
    # order spellings are first seen in, and max() keeps the first of equals
    votes: dict[str, tuple[str, dict[str, set[int]]]] = {}
    for doc_id, key, tag, _line in rows:
        parent = ""
        for level, part in zip(_levels(key), _parts(tag), strict=True):
            votes.setdefault(level, (parent, {}))[1].setdefault(part, set()).add(doc_id)
            parent = level
    names: dict[str, str] = {}
    for level, (parent, parts) in votes.items():  # a level is met after its parent
        spelling = max(parts.items(), key=lambda kv: len(kv[1]))[0]
        names[level] = f"{names[parent]}/{spelling}" if parent else spelling
    return names


def _parts(tag: str) -> list[str]:
    """The levels of a tag or key (`#a//b/` -> a, b); past MAX_LEVELS, the last holds the
    rest (`a/b/.../x/y`), so every tag has a level of its own."""
    parts = [p for p in tag.lstrip("#").split("/") if p]
    if len(parts) > MAX_LEVELS:
        parts[MAX_LEVELS - 1 :] = ["/".join(parts[MAX_LEVELS - 1 :])]
    return parts


def _levels(key: str) -> list[str]:
    """The keys of a tag and its parents, outermost first: `a/b/c` -> a, a/b, a/b/c."""
    parts = _parts(key)
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
