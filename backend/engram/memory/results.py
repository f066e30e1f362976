"""What memory operations return: frozen values with the JSON shape adapters print."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, ClassVar

from engram.codec import Score, encode
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
    is_default: bool
    template: str | None = None  # vault-relative path of new-fact.md
    template_status: str | None = None  # written | kept (it existed) | None
    templates_source: str | None = None  # where the templates folder name came from
    documents: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "name": self.name,
            "path": self.path,
            "factsRoot": self.facts_root,
            "configDir": self.config_dir,
            "default": self.is_default,
            "template": self.template,
            "templateStatus": self.template_status,
            "templatesFolderFrom": self.templates_source,
            "documents": self.documents,
        }


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

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (service/codec.py)."""
        data: dict[str, Any] = encode(self)
        return data


@dataclass(frozen=True)
class SupersedeResult:
    """The old fact (now merged) and the fact that replaces it."""

    old: Fact
    new: Fact

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"old": self.old.to_dict(), "new": self.new.to_dict()}


@dataclass(frozen=True)
class DailyResult:
    """A daily note after regeneration."""

    date: dt.date
    path: str
    facts: int
    written: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "date": self.date.isoformat(),
            "path": self.path,
            "facts": self.facts,
            "written": self.written,
        }


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

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (service/codec.py)."""
        data: dict[str, Any] = encode(self)
        return data


@dataclass(frozen=True)
class WakeResult:
    """What an agent needs when a session starts."""

    today: dt.date
    dirty: bool
    checkpoint: Checkpoint | None
    recent: tuple[Recent, ...]
    handoffs: tuple[Fact, ...]
    commitments: tuple[Fact, ...]
    projects: tuple[Fact, ...]
    reflection: tuple[str, str, str] | None = None  # the newest: week, path, text

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        week = self.reflection
        return {
            "dirtyExit": self.dirty,
            "checkpoint": self.checkpoint.to_dict() if self.checkpoint else None,
            "recent": [r.to_dict(self.today) for r in self.recent],
            "handoffs": [f.to_dict() for f in self.handoffs],
            "commitments": [f.to_dict() for f in self.commitments],
            "projects": [f.to_dict() for f in self.projects],
            "reflection": {"week": week[0], "path": week[1], "text": week[2]} if week else None,
        }


@dataclass(frozen=True)
class SessionEnd:
    """end-session: whether the flag was up, and the handoff fact stored."""

    was_dirty: bool
    handoff: Fact | None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "wasDirty": self.was_dirty,
            "handoff": self.handoff.to_dict() if self.handoff else None,
        }


@dataclass(frozen=True)
class LifecycleChange:
    """One fact moved to another lifecycle state by a sweep."""

    id: str
    path: str
    old: str
    new: str

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"id": self.id, "path": self.path, "from": self.old, "to": self.new}
