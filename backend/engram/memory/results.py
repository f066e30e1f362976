"""What memory operations return: frozen values; their JSON is engram.codec's."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import ClassVar

from engram.codec import Score, arg
from engram.memory.context import ContextItem, join
from engram.memory.model import Fact
from engram.memory.wake import Checkpoint, Recent


@dataclass(frozen=True)
class VaultInfo:
    """A registered vault."""

    name: str
    path: str
    facts_root: str
    config_dir: str
    is_default: bool = arg(wire="default")
    template: str | None = None  # vault-relative path of new-fact.md
    template_status: str | None = None  # written | kept (it existed) | None
    # where the templates folder name came from
    templates_source: str | None = arg(None, wire="templatesFolderFrom")
    documents: int | None = None


@dataclass(frozen=True)
class RecallHit:
    """A recalled fact (or note, with --notes) and the parts of its score."""

    kind: str  # fact | note
    path: str
    title: str
    score: Score
    relevance: Score
    importance: Score
    recency: Score
    fact: Fact | None = None
    snippet: str = ""


@dataclass(frozen=True)
class TimeWindow:
    """The days a recall kept to, in the local calendar: from `since` up to the day before
    `until` (either may be open), and the query's time words that named them."""

    since: dt.date | None = arg(None, doc="the first day")
    until: dt.date | None = arg(None, doc="the day after the last day")
    phrases: tuple[str, ...] = arg((), doc="the query's time words, as written")

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"label": "label"}

    @property
    def label(self) -> str:
        """The window for people: `2026-02-23 to 2026-03-01`, `since 2026-01-01`..."""
        if self.until == dt.date.min or (self.since and self.until and self.until <= self.since):
            return "no day (the time words exclude each other)"
        last = self.until - dt.timedelta(days=1) if self.until else None
        if self.since and last:
            return self.since.isoformat() if last == self.since else f"{self.since} to {last}"
        return f"since {self.since}" if self.since else f"up to {last}" if last else "any time"


@dataclass(frozen=True)
class RecallResult:
    """Recalled facts (and notes), and what recall read from the query: the words it
    searched, the time window its time words named and the fact type its question asked."""

    results: tuple[RecallHit, ...]
    searched: str = arg("", doc="the query without its time and question words")
    window: TimeWindow | None = None
    fact_type: str | None = arg(None, wire="type", doc="the type a question asked for")


@dataclass(frozen=True)
class SupersedeResult:
    """The old fact (now merged) and the fact that replaces it."""

    old: Fact
    new: Fact


@dataclass(frozen=True)
class DailyResult:
    """A daily note after regeneration."""

    date: dt.date
    path: str
    facts: int
    written: bool


@dataclass(frozen=True)
class ContextResult:
    """The context that fits the budget, item by item."""

    profile: str
    budget: int
    query: str | None
    items: tuple[ContextItem, ...]

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"usedTokens": "used_tokens", "text": "text"}

    @property
    def text(self) -> str:
        """All items as one text (never over the budget)."""
        return join(self.items)

    @property
    def used_tokens(self) -> int:
        """Tokens the items cost."""
        return sum(it.tokens for it in self.items)


@dataclass(frozen=True)
class Reflection:
    """The newest weekly reflection: its week, vault path and readable text."""

    week: str
    path: str
    text: str


@dataclass(frozen=True)
class WakeResult:
    """What an agent needs when a session starts."""

    dirty: bool = arg(wire="dirtyExit")
    checkpoint: Checkpoint | None = arg()
    recent: tuple[Recent, ...] = arg()  # each with its age on the day wake ran
    handoffs: tuple[Fact, ...] = arg()
    commitments: tuple[Fact, ...] = arg()
    projects: tuple[Fact, ...] = arg()
    reflection: Reflection | None = None


@dataclass(frozen=True)
class SessionEnd:
    """end-session: whether the flag was up, and the handoff fact stored."""

    was_dirty: bool
    handoff: Fact | None


@dataclass(frozen=True)
class LifecycleChange:
    """One fact moved to another lifecycle state by a sweep."""

    id: str
    path: str
    old: str = arg(wire="from")
    new: str = arg(wire="to")
