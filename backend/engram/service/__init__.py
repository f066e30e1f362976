"""The facade every adapter (CLI, HTTP, MCP) calls: one method per user-visible operation."""

from __future__ import annotations

from engram.search.results import Document, Passage, SearchResult
from engram.service.collections import CollectionsMixin
from engram.service.live import LiveMixin, filters_from_json
from engram.service.upkeep import UpkeepMixin


class Engram(LiveMixin, CollectionsMixin, UpkeepMixin):
    """Engram's operations over one index; the composition root builds it from Settings."""


__all__ = ["Document", "Engram", "Passage", "SearchResult", "filters_from_json"]
