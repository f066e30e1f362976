"""The fact: one typed piece of agent memory, stored as a markdown note in the vault."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
import uuid
from dataclasses import dataclass, field
from typing import ClassVar, Literal, cast

from engram.codec import arg

# factType -> folder under the facts root (DESIGN.md "Facts"; `lesson` is the seed's name
# for what the keyword rules infer from "learned / realized / never again").
TYPE_FOLDERS: dict[str, str] = {
    "decision": "decisions",
    "observation": "observations",
    "plan": "projects",
    "project": "projects",
    "error": "lessons",
    "insight": "lessons",
    "correction": "lessons",
    "learning": "lessons",
    "lesson": "lessons",
    "steering_rule": "preferences",
    "preference": "preferences",
    "session_summary": "handoffs",
    "commitment": "commitments",
    "relationship": "people",
    "fact": "facts",
    "feeling": "feelings",
}
FACT_TYPES = tuple(TYPE_FOLDERS)
DEFAULT_TYPE = "observation"
LIFECYCLE_STATES = ("active", "dormant", "merged", "archived", "pruned")
LIVE_STATES = ("active", "dormant")
EDITORS = ("human", "system")
# Folders under the facts root that hold generated notes, not facts.
DAILY_FOLDER = "daily"
LEDGER_FOLDER = "ledger"
ARCHIVE_FOLDER = "archive"
STRUCTURAL = 0.8
POTENTIAL = 0.4
Tier = Literal["structural", "potential", "contextual"]
TIERS: tuple[Tier, ...] = ("structural", "potential", "contextual")
# local (never synced, or the vault does not sync), synced, pending, conflict
SyncState = Literal["local", "synced", "pending", "conflict"]


def tier(importance: float) -> Tier:
    """Importance tier: structural >= 0.8, potential >= 0.4, else contextual."""
    if importance >= STRUCTURAL:
        return "structural"
    if importance >= POTENTIAL:
        return "potential"
    return "contextual"


def utc_now() -> dt.datetime:
    """Now, in UTC, to the second (what fact timestamps store)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def new_id() -> str:
    """A fresh fact id: 32 random hex digits (the file name uses the first 8)."""
    return uuid.uuid4().hex


def iso(moment: dt.datetime) -> str:
    """ISO 8601 in UTC with a Z: the form written to notes and JSON."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_SLUG_DROP = re.compile(r"[^\w\s-]")
_SLUG_SPACE = re.compile(r"[-\s_]+")


def slug(text: str, max_len: int = 60) -> str:
    """A file-name-safe slug: lower case, accents folded, words joined by hyphens."""
    folded = unicodedata.normalize("NFKD", text)
    folded = "".join(c for c in folded if not unicodedata.combining(c)).lower()
    words = _SLUG_SPACE.sub("-", _SLUG_DROP.sub(" ", folded)).strip("-")
    if len(words) > max_len:
        words = words[:max_len].rsplit("-", 1)[0] or words[:max_len]
    return words.strip("-") or "fact"


def file_name(title: str, fact_id: str) -> str:
    """`{slug}-{first 8 of id}.md`."""
    return f"{slug(title)}-{fact_id[:8]}.md"


def folder_for(fact_type: str, facts_root: str) -> str:
    """The vault-relative folder a fact of this type is written to."""
    return f"{facts_root}/{TYPE_FOLDERS.get(fact_type, 'facts')}"


def title_from_text(text: str, max_len: int = 80) -> str:
    """A title for a fact written without one: its first line, shortened at a word."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    first = re.sub(r"^#+\s*|^[-*>]\s+", "", first)
    first = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", first)  # [[a|b]] -> b
    first = " ".join(first.split())
    if len(first) > max_len:
        first = first[:max_len].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return first or "Untitled fact"


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize_text(text: str) -> str:
    """Fact text as stored: LF line ends, no control characters (a NUL would make the note
    read as binary), no surrounding blank space."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).strip()


def clean_line(text: str) -> str:
    """A one-line value (a title): control characters dropped, runs of space squeezed."""
    return " ".join(_CONTROL.sub("", text).split())


@dataclass(frozen=True)
class Fact:
    """A fact as its note says, plus where the note is (`path`, vault-relative)."""

    id: str
    title: str
    text: str
    fact_type: str = DEFAULT_TYPE
    timestamp: dt.datetime = field(default_factory=utc_now)
    updated_at: dt.datetime | None = None
    source: str = "engram"
    created_by: str = "engram"
    scope: str = "default"
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()  # names, written as "[[name]]" in the note
    importance: float = arg(0.5, wire="importanceScore")
    confidence: float = 1.0
    lifecycle: str = arg("active", wire="lifecycleState")
    superseded_by: str | None = None
    supersedes: str | None = None
    contradicts_with: tuple[str, ...] = ()
    convex_id: str | None = None
    vault_synced_at: dt.datetime | None = None
    last_edited_by: str = "system"
    path: str = ""
    access_count: int = 0
    last_access: dt.datetime | None = None
    # from the sync bookkeeping, when the vault syncs; on the wire as `syncState`
    sync_status: str | None = arg(None, wire="syncState")
    warnings: tuple[str, ...] = ()  # what failed after a write stored it (not in the note)

    # derived values the JSON carries too (`updatedAt` always says when it last changed)
    WIRE_EXTRA: ClassVar[dict[str, str]] = {
        "importanceTier": "tier",
        "updatedAt": "changed_at",
        "syncState": "sync_state",
    }

    @property
    def tier(self) -> Tier:
        """structural / potential / contextual, from the importance score."""
        return tier(self.importance)

    @property
    def changed_at(self) -> dt.datetime:
        """When the fact last changed: updatedAt, else its timestamp."""
        return self.updated_at or self.timestamp

    @property
    def sync_state(self) -> SyncState:
        """local (never synced, or the vault does not sync), synced, pending (changed since
        the last sync) or conflict (a conflict copy sync wrote is still there); the sync
        bookkeeping in the index says which."""
        return cast(SyncState, self.sync_status or "local")
