"""The facade every adapter (CLI, HTTP, MCP) calls: one method per user-visible operation.

Its names load on first use (PEP 562), so `engram.service.daemon` and the other light modules
of this package can be imported without the whole facade.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engram.index.turns import Replan, giving_way
    from engram.memory.results import RecallHit
    from engram.search.query_flags import filter_syntax
    from engram.search.results import Document, Passage, SearchResult
    from engram.service.engram import Engram
    from engram.sync.engine import SyncReport
    from engram.vault.changes import NoteChange

_WHERE = {
    "Document": "engram.search.results",
    "Engram": "engram.service.engram",
    "NoteChange": "engram.vault.changes",
    "Passage": "engram.search.results",
    "RecallHit": "engram.memory.results",
    "Replan": "engram.index.turns",
    "SearchResult": "engram.search.results",
    "SyncReport": "engram.sync.engine",
    "filter_syntax": "engram.search.query_flags",
    "giving_way": "engram.index.turns",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)


__all__ = [
    "Document",
    "Engram",
    "NoteChange",
    "Passage",
    "RecallHit",
    "Replan",
    "SearchResult",
    "SyncReport",
    "filter_syntax",
    "giving_way",
]
