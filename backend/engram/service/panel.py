"""The note panel: one note seen through every part of the facade (fact, graph, vectors)."""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from engram.errors import EngramError, NotFoundError, UnavailableError
from engram.store import admin
from engram.store import vectors as vector_store

if TYPE_CHECKING:
    from collections.abc import Callable

    from engram.memory.model import Fact
    from engram.search.results import SearchResult
    from engram.service.core import Core

MAX_BACKLINKS = 200
RELATED = 5


class PanelService:
    """note_panel: over the index `core`, with the fact a note holds (`fact_get`) and the
    notes nearest it by meaning (`related_notes`)."""

    def __init__(
        self,
        core: Core,
        fact_get: Callable[[str, str | None], Fact],
        related_notes: Callable[[str, str, int], list[SearchResult]],
    ) -> None:
        self._core = core
        self._fact_get = fact_get
        self._related_notes = related_notes

    def note_panel(self, collection: str, rel: str) -> dict[str, Any]:
        """What the fact panel shows for a note: properties, the fact it holds, backlinks with
        context, related notes by meaning, and index coverage."""
        from engram.graph import links

        col = self._core.require_collection(collection)
        conn = self._core.db.conn
        row = admin.document_by_path(conn, collection, rel)
        if row is None and not (col.path / rel).is_file():
            raise NotFoundError(f"no note at {rel!r} in {collection}")
        fm: dict[str, Any] = {}
        if row is not None:
            loaded = json.loads(row["frontmatter"] or "{}")
            fm = loaded if isinstance(loaded, dict) else {}
        chunks = vector_store.chunks_of(conn, row["hash"]) if row is not None else []
        # an empty note is chunked into no passages: embedded, with nothing to embed
        embedded = (
            row is not None
            and vector_store.is_chunked(conn, row["hash"])
            and len(vector_store.embedded_hashes(conn, [c.text_hash for c in chunks]))
            == len({c.text_hash for c in chunks})
        )
        return {
            "path": rel,
            "collection": collection,
            "docid": row["hash"][:6] if row is not None else None,
            "title": row["title"] if row is not None else PurePosixPath(rel).stem,
            "frontmatter": fm,
            "fact": self._fact_in(collection, rel),
            "backlinks": [
                {"path": b.path, "title": b.title, "line": b.line, "context": b.context}
                for b in links.backlinks(conn, int(row["id"]))[:MAX_BACKLINKS]
            ]
            if row is not None
            else [],
            "related": self._related(collection, rel) if row is not None else [],
            "coverage": {
                "indexed": row is not None,
                "indexedAt": row["indexed_at"] if row is not None else None,
                "chunks": len(chunks),
                "embedded": embedded,
            },
        }

    def _fact_in(self, collection: str, rel: str) -> dict[str, Any] | None:
        if self._core.settings.vault(collection) is None:
            return None
        try:
            return self._fact_get(rel, collection).to_dict()
        except NotFoundError:
            return None

    def _related(self, collection: str, rel: str) -> list[dict[str, Any]]:
        try:
            found = self._related_notes(collection, rel, RELATED)
        except (UnavailableError, EngramError):
            return []
        return [{"path": r.path, "title": r.title, "score": round(r.score, 4)} for r in found]
