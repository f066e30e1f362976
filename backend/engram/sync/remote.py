"""What Engram takes from a Convex deployment, checked before it is used: pages of changes,
the fact ids that become part of file names, and the fields of each change.

A page of the wrong shape is a malformed reply (the run stops with one line); a change that
cannot be applied is a bad record (parked with its reason, and the pull moves on past it).
A deployment is trusted with facts, never with where they land in the vault.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import Any, TypeGuard

from engram.printable import printable
from engram.sync.client import Malformed

MAX_ID = 200  # Convex's own limit for externalId (convex/lib/factModel.ts)
MAX_CURSOR = 1_000  # "<changeSeq>:<externalId>" is at most 221 characters
# path separators, and the characters Obsidian refuses in a file name
FORBIDDEN = frozenset('/\\:*?"<>|')
# controls, format characters (bidi overrides, zero-width), surrogates, private use, and
# line or paragraph separators: none can be told apart in a file name
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
SHORT_STRINGS = (
    "factType",
    "source",
    "createdBy",
    "scope",
    "timestamp",
    "updatedAt",
    "lifecycleState",
    "supersededBy",
    "supersedes",
    "lastEditedBy",
)
LONG_STRINGS = ("title", "text")  # control characters are dropped when the note is written
NUMBERS = ("importanceScore", "confidence")
LISTS = ("tags", "entities", "contradictsWith")


@dataclass(frozen=True)
class Page:
    """One page of `facts:listChangedSince`, its shape checked."""

    changes: tuple[dict[str, Any], ...]
    next_cursor: str
    is_done: bool


def parse_page(value: Any, limit: int) -> Page:
    """The page a listChangedSince reply holds; Malformed unless it is exactly
    `{changes: [object...], nextCursor: string, isDone: true|false}` with at most `limit`
    changes."""
    where = "facts:listChangedSince"
    if not isinstance(value, dict):
        raise Malformed(f"{where} returned {kind(value)}, not a page of changes")
    changes = value.get("changes")
    if not isinstance(changes, list):
        raise Malformed(f"{where} returned `changes` as {kind(changes)}, not a list")
    if len(changes) > limit:
        raise Malformed(f"{where} returned {len(changes)} changes when asked for {limit}")
    for item in changes:
        if not isinstance(item, dict):
            raise Malformed(f"{where} returned a change that is {kind(item)}, not an object")
    cursor = value.get("nextCursor")
    if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR or _hidden(cursor):
        raise Malformed(f"{where} returned `nextCursor` as {kind(cursor)}, not a cursor")
    done = value.get("isDone")
    if not isinstance(done, bool):
        raise Malformed(f"{where} returned `isDone` as {kind(done)}, not true or false")
    return Page(tuple(changes), cursor, done)


def id_problem(value: Any) -> str | None:
    """Why a fact id from Convex cannot be part of a note's file name (None: it can): it
    must be one path component of at most MAX_ID characters, not starting with a dot, with
    no separator, no character Obsidian refuses and no control or invisible character."""
    if not isinstance(value, str):
        return f"externalId is {kind(value)}, not a string"
    if not value.strip():
        return "externalId is empty"
    if len(value) > MAX_ID:
        return f"externalId is longer than {MAX_ID} characters"
    if value.startswith("."):
        return "externalId starts with a dot"
    for char in value:
        if char in FORBIDDEN:
            return f"externalId contains {char!r}"
        if unicodedata.category(char) in HIDDEN:
            return f"externalId contains the control or invisible character {char!a}"
    return None


def change_problem(change: dict[str, Any]) -> str | None:
    """Why a change (a fact as listChangedSince returns it) cannot be applied here, or None."""
    return id_problem(change.get("externalId")) or fields_problem(change)


def fields_problem(change: dict[str, Any]) -> str | None:
    """Why the fields of a fact from Convex, its id aside, cannot be used, or None."""
    version = change.get("version")
    if not _number(version) or version < 0:
        return f"version is {kind(version)}, not a number"
    seq = change.get("changeSeq")
    if not (isinstance(seq, str) and seq.isascii() and seq.isdigit() and len(seq) <= 20):
        return f"changeSeq is {kind(seq)}, not an Int64 as decimal digits"
    deleted = change.get("deletedAt")
    if deleted is not None and not _number(deleted):
        return f"deletedAt is {kind(deleted)}, not a number"
    for key in (*SHORT_STRINGS, *LONG_STRINGS):
        value = change.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key} is {kind(value)}, not a string"
        if key in SHORT_STRINGS and value is not None and _hidden(value):
            return f"{key} contains a control character"
    for key in NUMBERS:
        value = change.get(key)
        if value is not None and not _number(value):
            return f"{key} is {kind(value)}, not a number"
    for key in LISTS:
        value = change.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            return f"{key} is {kind(value)}, not a list of strings"
        if any(_hidden(x) for x in value):
            return f"{key} holds a control character"
    return None


def shown(value: Any, limit: int = 120) -> str:
    """A value from Convex as it may be shown: one line, controls escaped, cut short."""
    text = value if isinstance(value, str) else repr(value)
    return printable(text[:limit] + ("…" if len(text) > limit else ""))


def kind(value: Any) -> str:
    """A value described for an error message, without echoing a long one."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'the string "{shown(value, 40)}"'
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _hidden(text: str) -> bool:
    """True when text holds a control character other than tab and line breaks."""
    return any(unicodedata.category(c) == "Cc" and c not in "\t\n\r" for c in text)
