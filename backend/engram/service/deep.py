"""Deep search for agents: local hybrid recall over facts and notes, fused with the facts in
Convex when sync is configured (the sync part extends `deep_search`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engram.memory.results import RecallHit
from engram.service.memory_recall import MemoryRecallMixin

LOCAL_ONLY = "local only: sync is not configured"


@dataclass(frozen=True)
class DeepHit:
    """One fused result: where it came from (local, convex or both) and its fused score."""

    source: str
    score: float
    hit: RecallHit

    def to_dict(self) -> dict[str, Any]:
        """The recall hit's JSON with the source and the fused score."""
        return {**self.hit.to_dict(), "source": self.source, "score": round(self.score, 4)}


@dataclass(frozen=True)
class DeepSearchResult:
    """What `deep_search` found, which sources answered, and notes for the caller."""

    query: str
    sources: tuple[str, ...]
    hits: tuple[DeepHit, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "query": self.query,
            "sources": list(self.sources),
            "notes": list(self.notes),
            "results": [h.to_dict() for h in self.hits],
        }


class DeepSearchMixin(MemoryRecallMixin):
    """deep_search, and the vault a memory call acts on."""

    def vault_name(self, vault: str | None = None) -> str:
        """The collection name of the vault memory calls act on (a name, a folder, or the
        default vault); NotFoundError when there is none."""
        return self._vault(vault).name

    def deep_search(self, query: str, n: int = 10, vault: str | None = None) -> DeepSearchResult:
        """Facts and notes by local hybrid recall; with sync configured, Convex's facts are
        fused in by reciprocal rank (without it, the result says it is local only)."""
        hits = self.recall(query, n=n, include_notes=True, vault=vault)
        local = tuple(DeepHit("local", h.score, h) for h in hits)
        configured = bool(getattr(self, "sync_configured", lambda: False)())
        notes = () if configured else (LOCAL_ONLY,)
        return DeepSearchResult(query, ("local",), local, notes)
