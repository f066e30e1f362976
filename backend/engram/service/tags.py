"""How a tag is shown: each level in its most used spelling, as Obsidian shows one tag for
`#Project` and `#project` (store/tags.py matches and counts them as one).

A level's spelling is the one most notes use (a tie goes to the spelling seen first, in path
order), and a nested tag is named after its parent's name, so names always nest.
"""

from __future__ import annotations

from collections.abc import Iterable

# levels of a tag listed apart; the last holds the rest of a deeper tag, so a hostile tag of
# thousands of levels gives MAX_LEVELS names, not thousands of ever longer ones
MAX_LEVELS = 16


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
