"""The facade every adapter (CLI, HTTP, MCP) calls: one method per user-visible operation."""

from __future__ import annotations

import functools
import logging
from typing import Any

from engram.search.query_flags import filter_syntax
from engram.search.results import Document, Passage, SearchResult
from engram.service.deep import DeepSearchMixin
from engram.service.graph_files import GraphFiles
from engram.service.ledger import LedgerService
from engram.service.live import LiveMixin, filters_from_json
from engram.service.notes_move import NoteMoveMixin
from engram.service.panel import PanelMixin
from engram.service.rebuild import RebuildMixin
from engram.service.reflect import ReflectService
from engram.sync.engine import SyncReport


class Engram(NoteMoveMixin, LiveMixin, PanelMixin, DeepSearchMixin, RebuildMixin):
    """Engram's operations over one index; the composition root builds it from Settings."""

    @functools.cached_property
    def ledger(self) -> LedgerService:
        """Raw transcript ledger, observe, reflections, observation archive."""
        return LedgerService(
            self._vault,
            lambda: self.clock(),
            self._index,
            lambda: self.db,
            lambda: self.settings.memory.observations_keep_days,
        )

    @functools.cached_property
    def reflections(self) -> ReflectService:
        """Weekly reflections."""
        return ReflectService(self._vault, lambda: self.clock(), self._index, lambda: self.db)

    @functools.cached_property
    def graph_files(self) -> GraphFiles:
        """graph-index.json, graph export, typed neighbours, graph view colours."""
        return GraphFiles(
            lambda: self.db,
            lambda: self.settings,
            self.graph_collection,
            lambda note, col: self.links(note, col).note.path,
            self._vault,
        )

    def after_update(self, report: Any, specs: Any, only_paths: Any) -> None:
        """Then rewrite the graph index file of each vault whose graph changed."""
        super().after_update(report, specs, only_paths)
        try:
            self.graph_files.refresh([s.name for s in specs])
        except OSError as exc:  # a read-only vault: the index itself is fine
            logging.getLogger(__name__).warning("graph-index.json not written: %s", exc)


__all__ = [
    "Document",
    "Engram",
    "Passage",
    "SearchResult",
    "SyncReport",
    "filter_syntax",
    "filters_from_json",
]
