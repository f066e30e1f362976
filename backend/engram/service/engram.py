"""The local Engram: every operation run in this process.

Domain services are composed here, each given what it needs; the operations a face calls stay
one flat set of methods (service/operations.py lists them), each a one-line hand-over to the
service that owns it. The parts not yet split into services are still the mixin chain below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.service.deep import DeepSearchMixin
from engram.service.graph import GraphService
from engram.service.live import LiveMixin
from engram.service.notes_move import NoteMoveMixin
from engram.service.panel import PanelMixin
from engram.service.rebuild import RebuildMixin

if TYPE_CHECKING:
    from collections.abc import Callable

    from engram.config import Settings
    from engram.graph.results import (
        Neighborhood,
        NoteLinks,
        NotePath,
        NoteRef,
        Ranking,
        Theme,
        UnresolvedLink,
    )
    from engram.index import indexer
    from engram.models.protocols import Embedder
    from engram.secrets import KeyringLike


class Engram(NoteMoveMixin, LiveMixin, PanelMixin, DeepSearchMixin, RebuildMixin):
    """Engram's operations over one index; the composition root builds it from Settings."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        keyring_source: Callable[[], KeyringLike | None] | None = None,
    ) -> None:
        super().__init__(settings, embedder, keyring_source)
        self.graph = GraphService(self, self.search)

    def after_update(
        self,
        report: indexer.UpdateReport,
        specs: list[indexer.CollectionSpec],
        only_paths: dict[str, set[str]] | None,
    ) -> None:
        """Derived work once files are indexed: the mixins' part, then the links resolved."""
        super().after_update(report, specs, only_paths)
        self.graph.resolve_links(specs)

    # -- the graph (service/graph.py) ------------------------------------------------------

    def backlinks(self, note: str, collection: str | None = None) -> NoteLinks:
        """Links to a note, each with its line and that line's text."""
        return self.graph.backlinks(note, collection)

    def links(self, note: str, collection: str | None = None) -> NoteLinks:
        """Links written in a note, with where each resolves."""
        return self.graph.links(note, collection)

    def unresolved(
        self, collection: str | None = None, subpaths: bool = False
    ) -> list[UnresolvedLink]:
        """Links to files (or, with `subpaths`, headings/blocks) that do not exist."""
        return self.graph.unresolved(collection, subpaths)

    def orphans(self, collection: str | None = None) -> list[NoteRef]:
        """Notes with no link to or from another note."""
        return self.graph.orphans(collection)

    def neighbors(
        self, note: str, depth: int = 1, collection: str | None = None, direction: str = "both"
    ) -> Neighborhood:
        """Notes up to `depth` hops from a note."""
        return self.graph.neighbors(note, depth, collection, direction)

    def path(
        self, source: str, target: str, collection: str | None = None, directed: bool = False
    ) -> NotePath:
        """The shortest chain of links between two notes."""
        return self.graph.path(source, target, collection, directed)

    def rank(
        self,
        about: str | None = None,
        by: str = "influence",
        n: int = 20,
        collection: str | None = None,
    ) -> Ranking:
        """The most influential or bridging notes, maybe about a query."""
        return self.graph.rank(about, by, n, collection)

    def themes(self, collection: str | None = None, min_size: int = 2) -> list[Theme]:
        """Communities of linked notes, largest first."""
        return self.graph.themes(collection, min_size)
