"""The note panel: one note seen through every part of the facade (fact, graph, vectors)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from engram.codec import Score
from engram.errors import EngramError, NotFoundError, UnavailableError
from engram.memory.model import Fact
from engram.service.lanes import generated_paths
from engram.store import admin
from engram.store import vectors as vector_store

if TYPE_CHECKING:
    from collections.abc import Callable

    from engram.search.results import SearchResult
    from engram.service.core import Core

MAX_BACKLINKS = 200
RELATED = 5


@dataclass(frozen=True)
class PanelBacklink:
    """A link to the note: where it is written, and that line's text."""

    path: str | None
    title: str | None
    line: int
    context: str


@dataclass(frozen=True)
class RelatedNote:
    """A note near this one by meaning."""

    path: str
    title: str
    score: Score


@dataclass(frozen=True)
class Coverage:
    """How much of a note the index holds."""

    indexed: bool
    indexed_at: str | None
    chunks: int
    embedded: bool


@dataclass(frozen=True)
class NotePanel:
    """What the fact panel shows for a note."""

    path: str
    collection: str
    docid: str | None  # None: the note is not indexed
    title: str
    frontmatter: dict[str, Any]
    fact: Fact | None  # the fact the note holds, in a vault
    backlinks: tuple[PanelBacklink, ...]
    related: tuple[RelatedNote, ...]
    coverage: Coverage


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

    def note_panel(self, collection: str, rel: str) -> NotePanel:
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
        generated = generated_paths(self._core.settings, collection)  # restatements of facts
        backlinks = (
            links.backlinks(conn, int(row["id"]), MAX_BACKLINKS, generated)
            if row is not None
            else []
        )
        return NotePanel(
            path=rel,
            collection=collection,
            docid=row["hash"][:6] if row is not None else None,
            title=row["title"] if row is not None else PurePosixPath(rel).stem,
            frontmatter=fm,
            fact=self._fact_in(collection, rel),
            backlinks=tuple(PanelBacklink(b.path, b.title, b.line, b.context) for b in backlinks),
            related=self._related(collection, rel) if row is not None else (),
            coverage=Coverage(
                indexed=row is not None,
                indexed_at=row["indexed_at"] if row is not None else None,
                chunks=len(chunks),
                embedded=embedded,
            ),
        )

    def _fact_in(self, collection: str, rel: str) -> Fact | None:
        if self._core.settings.vault(collection) is None:
            return None
        try:
            return self._fact_get(rel, collection)
        except NotFoundError:
            return None

    def _related(self, collection: str, rel: str) -> tuple[RelatedNote, ...]:
        try:
            found = self._related_notes(collection, rel, RELATED)
        except (UnavailableError, EngramError):
            return ()
        return tuple(RelatedNote(r.path, r.title, r.score) for r in found)
