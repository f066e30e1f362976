"""Deep search for agents: local hybrid recall over facts and notes, fused by reciprocal rank
with the facts Convex finds when sync is configured (facts found on both sides appear once)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from engram.codec import Score, arg
from engram.errors import EngramError
from engram.memory.results import RecallHit, RecallResult
from engram.search.fusion import RankedList, rrf
from engram.sync.payload import fact_of, remote_fields

LOCAL_ONLY = "local only: sync is not configured"


@dataclass(frozen=True)
class DeepHit:
    """One fused result: where it came from (local, convex or both) and its fused score."""

    source: str
    score: Score
    hit: RecallHit


@dataclass(frozen=True)
class DeepSearchResult:
    """What `deep_search` found, which sources answered, and notes for the caller."""

    query: str
    sources: tuple[str, ...]
    hits: tuple[DeepHit, ...] = arg(wire="results")
    notes: tuple[str, ...] = ()


class Recall(Protocol):
    """Local hybrid recall over a vault's facts and notes."""

    def __call__(
        self,
        query: str = "",
        n: int = 10,
        *,
        include_notes: bool,
        vault: str | None,
        literal: bool,
    ) -> RecallResult: ...


class DeepSearchService:
    """deep_search: local `recall` fused with `cloud_search` (Convex) when `sync_configured`."""

    def __init__(
        self,
        recall: Recall,
        sync_configured: Callable[[str | None], bool],
        cloud_search: Callable[[str, int, str | None], list[Any]],
    ) -> None:
        self._recall = recall
        self._sync_configured = sync_configured
        self._cloud_search = cloud_search

    def deep_search(self, query: str, n: int = 10, vault: str | None = None) -> DeepSearchResult:
        """Facts and notes by local hybrid recall; with sync configured, Convex's facts are
        fused in by reciprocal rank (k=60), deduplicated by fact id, each hit saying whether
        it came from the vault, Convex or both. Convex unreachable: local only, and says so."""
        # literal: Convex's half reads no time words, so the local half does not either
        hits = self._recall(query, n, include_notes=True, vault=vault, literal=True).results
        local = {_key(h): h for h in hits}
        if not self._sync_configured(vault):
            ranked = [DeepHit("local", h.score, h) for h in hits]
            return DeepSearchResult(query, ("local",), tuple(ranked), (LOCAL_ONLY,))
        try:
            remote = [fact_of(remote_fields(r)) for r in self._cloud_search(query, n, vault)]
        except EngramError as exc:
            ranked = [DeepHit("local", h.score, h) for h in hits]
            note = f"local only: Convex did not answer ({exc.message})"
            return DeepSearchResult(query, ("local",), tuple(ranked), (note,))
        cloud = {f"fact:{f.id}": f for f in remote}
        fused = rrf(
            [
                RankedList("local", 1.0, tuple(local)),
                RankedList("convex", 1.0, tuple(cloud)),
            ]
        )
        out = []
        for item in fused[:n]:
            hit = local.get(item.key)
            if hit is None:
                fact = cloud[item.key]
                hit = RecallHit("fact", "", fact.title, 0.0, 0.0, fact.importance, 0.0, fact)
            source = "both" if len(item.ranks) == 2 else next(iter(item.ranks))
            out.append(DeepHit(source, item.score, hit))
        return DeepSearchResult(query, ("local", "convex"), tuple(out))


def _key(hit: RecallHit) -> str:
    return f"fact:{hit.fact.id}" if hit.fact is not None else f"note:{hit.path}"
