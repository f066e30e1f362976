"""Colour groups for Obsidian's graph view, added to `<config dir>/graph.json` by text edit.

Obsidian keeps the graph view's settings in `graph.json`, `colorGroups` being a list of
`{"query": ..., "color": {"a": 1, "rgb": N}}`. A person's file is edited, not rewritten:
the new groups are inserted at the end of that list (or a `colorGroups` key is added before
the object's closing brace), so every other byte — their settings, their groups, their
formatting — stays as it was. A group whose query is already there is not added again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engram.errors import InvalidInputError

# one colour per facts folder (Tableau-like, readable on light and dark themes)
PALETTE = (
    0x4E79A7,
    0xF28E2B,
    0xE15759,
    0x76B7B2,
    0x59A14F,
    0xEDC948,
    0xB07AA1,
    0xFF9DA7,
    0x9C755F,
    0xBAB0AC,
)
KEY = "colorGroups"


@dataclass(frozen=True)
class Group:
    """One colour group: a search query and its colour."""

    query: str
    rgb: int

    def to_json(self) -> str:
        """The group as Obsidian writes it (2-space indent), one level into the list."""
        body = {"query": self.query, "color": {"a": 1, "rgb": self.rgb}}
        text = json.dumps(body, ensure_ascii=False, indent=2)
        return "\n".join("    " + line for line in text.splitlines())


def folder_groups(facts_root: str, folders: Iterable[str]) -> list[Group]:
    """A group per facts folder, `path:"<root>/<folder>/"`, in the given order."""
    out = []
    for i, folder in enumerate(dict.fromkeys(folders)):
        query = f'path:"{facts_root}/{folder}/"'
        out.append(Group(query, PALETTE[i % len(PALETTE)]))
    return out


def missing(text: str | None, groups: Iterable[Group]) -> list[Group]:
    """The groups whose query the file does not have yet."""
    data = _load(text)
    have = {g.get("query") for g in data.get(KEY) or [] if isinstance(g, dict)}
    return [g for g in groups if g.query not in have]


def add(text: str | None, groups: list[Group]) -> str:
    """The file's text with `groups` appended to its colour groups; every other byte kept."""
    data = _load(text)
    if not groups:
        return text or ""
    items = ",\n".join(g.to_json() for g in groups)
    if text is None or not text.strip():
        return f'{{\n  "{KEY}": [\n{items}\n  ]\n}}'
    spans = _top_level(text)
    if KEY in spans and isinstance(data.get(KEY), list):
        start, end = spans[KEY]
        close = end - 1  # the list's "]"
        inner_end = _back(text, close, start + 1)
        if inner_end == start:  # an empty list
            insert = f"\n{items}\n  "
            return text[: start + 1] + insert + text[close:]
        return text[: inner_end + 1] + ",\n" + items + text[inner_end + 1 :]
    if KEY in spans:
        raise InvalidInputError(f"graph.json: {KEY!r} is not a list; not touched")
    close = text.rstrip().rfind("}")
    last = _back(text, close, text.index("{") + 1)
    if last == text.index("{"):  # an empty object
        return text[: last + 1] + f'\n  "{KEY}": [\n{items}\n  ]\n' + text[close:]
    return text[: last + 1] + f',\n  "{KEY}": [\n{items}\n  ]' + text[last + 1 :]


def _load(text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(
            f"graph.json is not valid JSON ({exc}); not touched",
            "let Obsidian rewrite it (open and close the graph view), or fix it by hand",
        ) from None
    if not isinstance(data, dict):
        raise InvalidInputError("graph.json does not hold a JSON object; not touched")
    return data


def _back(text: str, pos: int, floor: int) -> int:
    """The index of the last non-blank character before `pos` (at least `floor` - 1)."""
    i = pos - 1
    while i >= floor and text[i] in " \t\r\n":
        i -= 1
    return i


def _top_level(text: str) -> dict[str, tuple[int, int]]:
    """Each top-level key's value as a (start, end) span of the text (last one wins)."""
    decoder = json.JSONDecoder()
    spans: dict[str, tuple[int, int]] = {}
    i = _skip(text, text.index("{") + 1)
    while i < len(text) and text[i] != "}":
        key, i = decoder.raw_decode(text, i)
        i = _skip(text, i)
        i = _skip(text, i + 1)  # the ":"
        start = i
        _, i = decoder.raw_decode(text, i)
        spans[str(key)] = (start, i)
        i = _skip(text, i)
        if i < len(text) and text[i] == ",":
            i = _skip(text, i + 1)
    return spans


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i
