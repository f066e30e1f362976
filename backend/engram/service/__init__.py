"""The facade every adapter (CLI, HTTP, MCP) calls: one method per user-visible operation."""

from __future__ import annotations

import functools

from engram.search.query_flags import filter_syntax
from engram.search.results import Document, Passage, SearchResult
from engram.service.deep import DeepSearchMixin
from engram.service.ledger import LedgerService
from engram.service.live import LiveMixin, filters_from_json
from engram.service.notes_move import NoteMoveMixin
from engram.service.panel import PanelMixin
from engram.service.rebuild import RebuildMixin
from engram.sync.engine import SyncReport


class Engram(NoteMoveMixin, LiveMixin, PanelMixin, DeepSearchMixin, RebuildMixin):
    """Engram's operations over one index; the composition root builds it from Settings."""

    @functools.cached_property
    def ledger(self) -> LedgerService:
        """Raw transcript ledger, observe, reflections, observation archive."""
        return LedgerService(self._vault, lambda: self.clock(), self._index, lambda: self.db)


__all__ = [
    "Document",
    "Engram",
    "Passage",
    "SearchResult",
    "SyncReport",
    "filter_syntax",
    "filters_from_json",
]
