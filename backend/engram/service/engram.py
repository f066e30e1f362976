"""The local Engram: every operation run in this process.

Domain services are composed here, each given what it needs; the operations a face calls stay
one flat set of methods (service/operations.py lists them), each a one-line hand-over to the
service that owns it. The parts not yet split into services are still the mixin chain below.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from engram.service.deep import DeepSearchMixin
from engram.service.graph import GraphService
from engram.service.graph_files import GraphFiles
from engram.service.ledger import LedgerService
from engram.service.live import LiveMixin
from engram.service.notes_move import NoteMoveMixin
from engram.service.panel import PanelMixin
from engram.service.rebuild import RebuildMixin
from engram.service.reflect import ReflectService

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

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
    from engram.memory.archive import Move
    from engram.memory.ledger_raw import AppendResult
    from engram.memory.observe import ObserveResult
    from engram.models.protocols import Embedder
    from engram.secrets import KeyringLike
    from engram.service.graph_files import ColourPlan, GraphExport, TypedNeighborhood
    from engram.service.reflect import ReflectResult

log = logging.getLogger(__name__)


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
        self.graph_files = GraphFiles(
            lambda: self.db,
            lambda: self.settings,
            self.graph.graph_collection,
            lambda note, col: self.graph.links(note, col).note.path,
            self._vault,
        )
        self.ledger = LedgerService(
            self._vault,
            lambda: self.clock(),
            self._index,
            lambda: self.db,
            lambda: self.settings.memory.observations_keep_days,
        )
        self.reflections = ReflectService(
            self._vault, lambda: self.clock(), self._index, lambda: self.db
        )

    def after_update(
        self,
        report: indexer.UpdateReport,
        specs: list[indexer.CollectionSpec],
        only_paths: dict[str, set[str]] | None,
    ) -> None:
        """Derived work once files are indexed: the mixins' part, the links resolved, then
        the graph index file of each vault whose graph changed."""
        super().after_update(report, specs, only_paths)
        self.graph.resolve_links(specs)
        try:
            self.graph_files.refresh([s.name for s in specs])
        except OSError as exc:  # a read-only vault: the index itself is fine
            log.warning("graph-index.json not written: %s", exc)

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

    # -- the typed graph and its files (service/graph_files.py) ---------------------------

    def typed_neighbors(
        self,
        note: str,
        edge_types: Iterable[str],
        depth: int = 1,
        direction: str = "both",
        collection: str | None = None,
    ) -> TypedNeighborhood:
        """Nodes (notes, tags, unresolved targets) within `depth` edges of the chosen types."""
        return self.graph_files.neighbors(note, edge_types, depth, direction, collection)

    def graph_export(
        self, fmt: str = "json", collection: str | None = None, output: str | None = None
    ) -> GraphExport:
        """The typed graph as JSON or GraphML text, or written atomically to `output`."""
        return self.graph_files.export(fmt, collection, output)

    def graph_colours(self, write: bool = False, vault: str | None = None) -> ColourPlan:
        """Colour groups per facts folder for Obsidian's graph view; previewed unless `write`."""
        return self.graph_files.colours(write, vault)

    # -- the raw ledger and reflections (service/ledger.py, service/reflect.py) -----------

    def ledger_append(
        self, agent: str, lines: Iterable[tuple[int, Any]], vault: str | None = None
    ) -> AppendResult:
        """Append JSON objects (line number, object) to an agent's raw ledger, all or none."""
        return self.ledger.append(agent, lines, vault)

    def ledger_observe(
        self, agent: str | None = None, day: str | None = None, vault: str | None = None
    ) -> ObserveResult:
        """Score a day's raw lines (one agent's or all) into that day's observation lines."""
        return self.ledger.observe(agent, day, vault)

    def ledger_archive(self, dry_run: bool = False, vault: str | None = None) -> list[Move]:
        """Move observation days past `memory.observations_keep_days` to the archive."""
        return self.ledger.archive(dry_run, vault)

    def reflect(self, week: str | None = None, vault: str | None = None) -> ReflectResult:
        """Regenerate a week's reflection (default: the last week that ended)."""
        return self.reflections.reflect(week, vault)
