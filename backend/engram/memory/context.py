"""Context building: profiles order the sources, a hard token budget (chars/4) cuts the list.

Sources: `structural`, `potential` and `contextual` facts (by importance tier), `daily`
(today's and yesterday's daily notes), `search` (hits for the query), `graph` (notes
1-2 links away from the hits) and `reflection` (the newest weekly reflection, handoff only).
A profile says which source comes first; inside a source, higher scores first. Items are
taken in that order while they fit; an item too big for what is left is cut to fit when at
least MIN_CUT_TOKENS remain, else skipped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import ClassVar

from engram.codec import Score
from engram.errors import InvalidInputError

SOURCES = ("structural", "potential", "contextual", "daily", "search", "graph", "reflection")
PROFILES: dict[str, tuple[str, ...]] = {
    "default": ("structural", "daily", "search", "graph", "potential", "contextual"),
    "planning": ("search", "graph", "structural", "potential", "daily", "contextual"),
    "incident": ("structural", "search", "potential", "daily", "graph", "contextual"),
    "handoff": ("daily", "reflection", "structural", "potential", "search", "graph", "contextual"),
}
ONLY_IN = {"reflection": ("handoff",)}  # a source no other profile takes
SEPARATOR = "\n\n"
MIN_CUT_TOKENS = 24
ELLIPSIS = " …"


def estimate_tokens(text: str) -> int:
    """Tokens as the budget counts them: characters / 4, rounded up."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class ContextItem:
    """One piece of context: where it came from, how it scored, its text."""

    source: str
    text: str
    score: Score
    ref: str  # vault path, or a fact id for facts
    title: str = ""
    truncated: bool = False

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"tokens": "tokens"}

    @property
    def tokens(self) -> int:
        """Tokens this item costs in the joined text (its separator included)."""
        return estimate_tokens(self.text + SEPARATOR)


def profile_order(profile: str) -> tuple[str, ...]:
    """The source order of a profile; InvalidInputError names the profiles."""
    try:
        return PROFILES[profile]
    except KeyError:
        raise InvalidInputError(
            f"unknown profile {profile!r}; use one of: {', '.join(PROFILES)}"
        ) from None


def fit(items: Iterable[ContextItem], profile: str, budget: int) -> list[ContextItem]:
    """Items in profile order that fit the budget; the joined text never exceeds it.

    The same `ref` is kept once, at its first (highest-priority) place, and a daily note
    leaves out its lines about facts the context holds anyway (a daily note lists the day's
    facts): the budget they took goes to what the context does not say yet.
    """
    items = list(items)
    chosen = _fit(items, profile, budget)
    for _ in range(3):  # each pass may take in more facts, whose daily lines then go
        told = {it.ref.removesuffix(".md") for it in chosen if it.source != "daily"}
        again = _fit([_untold(it, told) for it in items], profile, budget)
        if again == chosen:
            break
        chosen = again
    return chosen


def _untold(item: ContextItem, told: set[str]) -> ContextItem:
    """A daily note without its list lines linking to a note in `told`, and without the
    headings whose every line went; other items as they are."""
    if item.source != "daily" or not told:
        return item
    lines = item.text.split("\n")
    gone = {i for i, ln in enumerate(lines) if _is_item(ln) and _links_to(ln, told)}
    if not gone:
        return item
    for i, ln in enumerate(lines):
        under = [j for j in _section(lines, i) if _is_item(lines[j])] if ln.startswith("#") else []
        if under and set(under) <= gone:
            gone.add(i)
    text = "\n".join(ln for i, ln in enumerate(lines) if i not in gone).strip()
    return replace(item, text=re.sub(r"\n{3,}", "\n\n", text))


def _is_item(line: str) -> bool:
    return line.lstrip().startswith("- ")


def _links_to(line: str, told: set[str]) -> bool:
    return any(f"[[{ref}|" in line or f"[[{ref}]]" in line for ref in told)


def _section(lines: list[str], heading: int) -> list[int]:
    """The indexes of the lines under the heading at `heading`, up to the next heading."""
    out = []
    for j in range(heading + 1, len(lines)):
        if lines[j].startswith("#"):
            break
        out.append(j)
    return out


def _fit(items: list[ContextItem], profile: str, budget: int) -> list[ContextItem]:
    if budget < 0:
        raise InvalidInputError("the token budget must be zero or more")
    rank = {source: i for i, source in enumerate(profile_order(profile))}
    items = [it for it in items if profile in ONLY_IN.get(it.source, (profile,))]
    ordered = sorted(items, key=lambda it: (rank.get(it.source, len(rank)), -it.score, it.ref))
    chosen: list[ContextItem] = []
    seen: set[str] = set()
    left = budget
    for item in ordered:
        if item.ref in seen or not item.text:
            continue
        if item.tokens <= left:
            chosen.append(item)
        elif left >= MIN_CUT_TOKENS:
            chosen.append(_cut(item, left))
        else:
            continue
        seen.add(item.ref)
        left -= chosen[-1].tokens
    return chosen


def _cut(item: ContextItem, tokens: int) -> ContextItem:
    room = tokens * 4 - len(SEPARATOR) - len(ELLIPSIS)
    text = item.text[:room]
    if " " in text[room // 2 :]:
        text = text.rsplit(" ", 1)[0]
    return replace(item, text=text + ELLIPSIS, truncated=True)


def join(items: Iterable[ContextItem]) -> str:
    """The context as one text."""
    return SEPARATOR.join(it.text for it in items)
