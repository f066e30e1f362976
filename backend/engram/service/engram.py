"""The local Engram: every operation run in this process.

Domain services are composed here, each given what it needs; the operations a face calls stay
one flat set of methods (service/operations.py lists them), most of them one `Handover` line
naming the service that owns it. `Engram` is the core (settings, the index, the clock) and
holds every part; no part inherits another.
"""

from __future__ import annotations

import logging
from functools import cached_property
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from engram.service.core import Core
from engram.service.names import Named, as_link, find_named
from engram.service.retrieval import RetrievalService

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from engram.config import Settings
    from engram.index import embed as embedding
    from engram.index import indexer
    from engram.memory.model import Fact
    from engram.memory.results import (
        SupersedeResult,
    )
    from engram.models.protocols import Embedder, Generator, Reranker
    from engram.search.results import Document, SearchResult
    from engram.secrets import KeyringLike
    from engram.service.collections import (
        CollectionsService,
    )
    from engram.service.deep import DeepSearchService
    from engram.service.graph import GraphService
    from engram.service.graph_files import (
        GraphFiles,
    )
    from engram.service.hybrid import HybridService
    from engram.service.ledger import LedgerService
    from engram.service.live import LiveService
    from engram.service.memory import MemoryService
    from engram.service.memory_recall import RecallService
    from engram.service.memory_write import FactWriter
    from engram.service.model_health import ModelHealthService
    from engram.service.notes import NoteWriter
    from engram.service.notes_base import NoteAccess
    from engram.service.notes_move import NoteMover
    from engram.service.panel import PanelService
    from engram.service.rebuild import RebuildService
    from engram.service.reflect import ReflectService
    from engram.service.semantic import SemanticService
    from engram.service.sync import SyncService
    from engram.service.tags import TagList
    from engram.service.upkeep import UpkeepService
    from engram.store.filters import Filters
    from engram.sync.client import Backoff

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


class Handover(Generic[P, R]):
    """A facade method that is a part's method, written once as the way to it:
    `search = Handover(lambda e: e._retrieval.search)`. The type checker gives it the part
    method's signature; on an Engram it is the part's bound method (signature and docstring
    included); on the class it calls that method of the Engram it is given, under its
    facade name (`gw.run(Engram.search, ...)`)."""

    def __init__(self, way: Callable[[Engram], Callable[P, R]]) -> None:
        self._way = way
        self.__name__ = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.__name__ = name

    @overload
    def __get__(self, obj: None, owner: type) -> Callable[Concatenate[Engram, P], R]: ...
    @overload
    def __get__(self, obj: Engram, owner: type) -> Callable[P, R]: ...
    def __get__(self, obj: Engram | None, owner: type) -> Any:
        return self if obj is None else self._way(obj)

    def __call__(self, engram: Engram, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._way(engram)(*args, **kwargs)


class Engram(Core):
    """Engram's operations over one index; the composition root builds it from Settings."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        keyring_source: Callable[[], KeyringLike | None] | None = None,
    ) -> None:
        super().__init__(settings, keyring_source)
        self._embedder = embedder  # handed to the semantic part when it is built
        self._retrieval = RetrievalService(self, self.after_update, self._note_named)
        self._defer_generated = False  # see defer_generated_embedding

    # The parts below are built on first use, each importing its module then: a command
    # loads only the parts its operations reach (`engram search` needs retrieval alone).

    @cached_property
    def _semantic(self) -> SemanticService:
        from engram.service.semantic import SemanticService

        return SemanticService(self, self._retrieval, self._embedder)

    @cached_property
    def _hybrid(self) -> HybridService:
        from engram.service.hybrid import HybridService

        return HybridService(self, self._retrieval, self._semantic)

    @cached_property
    def graph(self) -> GraphService:
        """The graph part (service/graph.py), which the graph operations hand over to."""
        from engram.service.graph import GraphService

        return GraphService(self, self.search)

    @cached_property
    def memory(self) -> MemoryService:
        """Vaults, the fact index and reading facts (service/memory.py)."""
        from engram.service.memory import MemoryService

        return MemoryService(self, self._update_written)

    @cached_property
    def _fact_writer(self) -> FactWriter:
        from engram.service.memory_write import FactWriter

        return FactWriter(self, self.memory)

    @cached_property
    def _recall(self) -> RecallService:
        from engram.service.memory_recall import RecallService

        return RecallService(self, self.memory, self.fact_add, self.query, self.search, self.graph)

    @cached_property
    def graph_files(self) -> GraphFiles:
        """graph-index.json, export, typed neighbours, colours (service/graph_files.py)."""
        from engram.service.graph_files import GraphFiles

        return GraphFiles(
            lambda: self.db,
            lambda: self.settings,
            self.graph.graph_collection,
            lambda note, col: self.graph.links(note, col).note.path,
            self.memory.vault,
        )

    @cached_property
    def ledger(self) -> LedgerService:
        """The raw ledger, observe and the archive (service/ledger.py)."""
        from engram.service.ledger import LedgerService

        return LedgerService(
            self.memory.vault,
            lambda: self.clock(),
            self.memory.index,
            lambda: self.db,
            lambda: self.settings.memory.observations_keep_days,
        )

    @cached_property
    def reflections(self) -> ReflectService:
        """Weekly reflections (service/reflect.py)."""
        from engram.service.reflect import ReflectService

        return ReflectService(
            self.memory.vault, lambda: self.clock(), self.memory.index, lambda: self.db
        )

    @cached_property
    def _collections(self) -> CollectionsService:
        from engram.service.collections import CollectionsService

        return CollectionsService(self)

    @cached_property
    def _live(self) -> LiveService:
        from engram.service.live import LiveService

        return LiveService(self, self._collections, self.update)

    @cached_property
    def _sync(self) -> SyncService:
        from engram.service.sync import SyncService

        return SyncService(self, self.memory, self._fact_writer)

    @cached_property
    def _panel(self) -> PanelService:
        from engram.service.panel import PanelService

        return PanelService(self, self.fact_get, self.related_notes)

    @cached_property
    def _deep(self) -> DeepSearchService:
        from engram.service.deep import DeepSearchService

        return DeepSearchService(self.recall, self.sync_configured, self.cloud_search)

    @cached_property
    def _notes(self) -> NoteAccess:
        from engram.service.notes_base import NoteAccess

        return NoteAccess(self, self.graph, self._update_written)

    @cached_property
    def _note_writer(self) -> NoteWriter:
        from engram.service.notes import NoteWriter

        return NoteWriter(self, self._notes)

    @cached_property
    def _note_mover(self) -> NoteMover:
        from engram.service.notes_move import NoteMover

        return NoteMover(self, self._notes, self._update_written)

    @cached_property
    def _model_health(self) -> ModelHealthService:
        from engram.service.model_health import ModelHealthService

        return ModelHealthService(self, self, self._loaded_model)

    @cached_property
    def _upkeep(self) -> UpkeepService:
        from engram.service.upkeep import UpkeepService

        return UpkeepService(self, self)

    @cached_property
    def _rebuild(self) -> RebuildService:
        from engram.service.rebuild import RebuildService

        return RebuildService(self, self._engram_for, self._forget_caches)

    def _engram_for(self, settings: Settings) -> Engram:
        """A facade over other settings with this one's models and clock (rebuild's builder)."""
        other = type(self)(settings, embedder=self._semantic.loaded_embedder())
        other.clock = self.clock
        other.zone = self.zone
        return other

    def _loaded_model(self, role: str) -> Embedder | Reranker | Generator | None:
        """A role's model if this process has loaded it (status loads nothing)."""
        return self._semantic.loaded_embedder() if role == "embed" else self._hybrid.loaded(role)

    def _models_changed(self) -> None:
        """The config file now names other models: load them when next needed."""
        for part in ("_semantic", "_hybrid"):
            if part in self.__dict__:  # built (cached_property): else nothing is loaded
                getattr(self, part).drop_models()

    def _forget_caches(self) -> None:
        """Drop what this process keeps of the index file (it was replaced)."""
        self._semantic.forget()
        self.graph.forget()

    def after_update(
        self,
        report: indexer.UpdateReport,
        specs: list[indexer.CollectionSpec],
        only_paths: dict[str, set[str]] | None,
    ) -> None:
        """Derived work once files are indexed: the links resolved, the fact rows of the fact
        notes that changed, then the graph index file of each vault whose graph changed."""
        self.graph.resolve_links(specs)
        self.memory.refresh_facts(report)
        try:
            self.graph_files.refresh([s.name for s in specs])
        except OSError as exc:  # a read-only vault: the index itself is fine
            log.warning("graph-index.json not written: %s", exc)

    # -- indexing, keyword search and documents (service/retrieval.py) ---------------------

    update = Handover(lambda e: e._retrieval.update)

    def _update_written(
        self,
        collections: Iterable[str] = (),
        progress: indexer.Progress | None = None,
        only_paths: dict[str, set[str]] | None = None,
        force: bool = False,
        embed: bool = True,
    ) -> indexer.UpdateReport:
        """`update` for the services that write notes: the files a write names (`only_paths`)
        are embedded as well, so every write leaves the index current when it returns
        (`embed=False`: Engram's generated notes, which may wait for the daemon's job, see
        defer_generated_embedding; with no daemon they are embedded here too)."""
        report = self.update(collections, progress, only_paths, force)
        now = embed or not self._defer_generated
        if now and only_paths is not None and report.changed_ids:
            self._semantic.embed_written(report.changed_ids)
        return report

    def defer_generated_embedding(self) -> None:
        """The daemon: Engram's generated notes a write touches (ledger, daily notes) are
        embedded by the index job it queues after every write, not inside the write (a day's
        growing notes took a second to embed again). Without a daemon nothing would embed them
        later, so a process that does not call this embeds them before the write returns."""
        self._defer_generated = True

    parse = Handover(lambda e: e._retrieval.parse)
    search = Handover(lambda e: e._retrieval.search)
    result_from_hit = Handover(lambda e: e._retrieval.result_from_hit)

    def get(self, ref: str, from_line: int | None = None, max_lines: int | None = None) -> Document:
        """One document by path, engram:// URI, #docid, title, alias or `[[link]]` (its
        `#heading` or `#^block` gives the lines), optionally `:LINE` and a line count."""
        link = as_link(ref)
        if link is not None and (link.heading or link.block):
            return self._retrieval.get_link(link, from_line, max_lines)
        return self._retrieval.get(ref, from_line, max_lines)

    def _note_named(self, text: str) -> Named:
        """The note a title, alias, file name or `[[link]]` names, the default vault first."""
        names = [c.name for c in self.settings.collections]
        first = self.settings.default_vault
        order = sorted(names, key=lambda n: n != first)  # stable: the rest as configured
        return find_named(text, order, lambda c: self.graph.vault_graph(c)[1].finder)

    multi_get = Handover(lambda e: e._retrieval.multi_get)

    # -- models, embeddings and vector search (service/semantic.py) ------------------------

    embedder = Handover(lambda e: e._semantic.embedder)
    model_spec = Handover(lambda e: e._semantic.model_spec)
    model_path = Handover(lambda e: e._semantic.model_path)
    models_list = Handover(lambda e: e._semantic.models_list)
    models_pull = Handover(lambda e: e._semantic.models_pull)
    use_embed_model = Handover(lambda e: e._semantic.use_embed_model)
    fit_embed_model = Handover(lambda e: e._semantic.fit_embed_model)
    models_info = Handover(lambda e: e._semantic.models_info)

    def embed(
        self,
        collections: Iterable[str] = (),
        force: bool = False,
        progress: embedding.Progress | None = None,
        say: Callable[[str], None] | None = None,
    ) -> embedding.EmbedReport:
        """Chunk and embed what has no vector yet (all with `force`)."""
        return self._semantic.embed(collections, force, progress, say)

    prepare_default_embedder = Handover(lambda e: e._semantic.prepare_default_embedder)

    embed_if_available = Handover(lambda e: e._semantic.embed_if_available)
    vsearch = Handover(lambda e: e._semantic.vsearch)
    result_from_vector_hit = Handover(lambda e: e._semantic.result_from_vector_hit)
    related_notes = Handover(lambda e: e._semantic.related_notes)
    embedding_state = Handover(lambda e: e._semantic.embedding_state)

    # -- memory: vaults and reading facts (service/memory.py) -------------------------------

    init_vault = Handover(lambda e: e.memory.init_vault)
    fact_get = Handover(lambda e: e.memory.fact_get)
    fact_list = Handover(lambda e: e.memory.fact_list)
    recent_facts = Handover(lambda e: e.memory.recent_facts)

    # -- memory: writing facts (service/memory_write.py) ----------------------------------

    fact_add = Handover(lambda e: e._fact_writer.fact_add)
    fact_update = Handover(lambda e: e._fact_writer.fact_update)
    fact_archive = Handover(lambda e: e._fact_writer.fact_archive)

    def fact_supersede(
        self,
        ref: str,
        text: str | None = None,
        by: str | None = None,
        vault: str | None = None,
        **fields: Any,
    ) -> SupersedeResult:
        """Replace a fact by a new one (`text`) or an existing one (`by`); both notes say so."""
        return self._fact_writer.fact_supersede(ref, text, by, vault, **fields)

    def fact_from_note(
        self, path: str, selection: str | None = None, vault: str | None = None, **fields: Any
    ) -> Fact:
        """A fact from a selection of a note (a new fact citing it)."""
        return self._fact_writer.fact_from_note(path, selection, vault, **fields)

    fact_sweep = Handover(lambda e: e._fact_writer.fact_sweep)

    # -- memory: recall, context, daily notes, wake (service/memory_recall.py) -------------

    fact_relevance = Handover(lambda e: e._recall.fact_relevance)
    neighbours_for = Handover(lambda e: e._recall.neighbours_for)
    recall = Handover(lambda e: e._recall.recall)
    memory_context = Handover(lambda e: e._recall.memory_context)
    daily = Handover(lambda e: e._recall.daily)
    checkpoint = Handover(lambda e: e._recall.checkpoint)
    wake = Handover(lambda e: e._recall.wake)
    end_session = Handover(lambda e: e._recall.end_session)

    # -- hybrid query (service/hybrid.py) ---------------------------------------------------

    reranker = Handover(lambda e: e._hybrid.reranker)
    generator = Handover(lambda e: e._hybrid.generator)

    def query(
        self,
        query: str,
        n: int | None = 10,
        collections: Iterable[str] = (),
        min_score: float = 0.0,
        full: bool = False,
        filters: Filters | None = None,
        with_snippets: bool = True,
        **options: Any,
    ) -> list[SearchResult]:
        """Hybrid search results (see `query_run` for stages and notices)."""
        return self._hybrid.query(
            query, n, collections, min_score, full, filters, with_snippets, **options
        )

    query_run = Handover(lambda e: e._hybrid.query_run)

    # -- collections and contexts (service/collections.py) ---------------------------------

    collection_add = Handover(lambda e: e._collections.collection_add)
    collection_list = Handover(lambda e: e._collections.collection_list)
    collection_show = Handover(lambda e: e._collections.collection_show)
    collection_remove = Handover(lambda e: e._collections.collection_remove)

    collection_rename = Handover(lambda e: e._collections.collection_rename)

    ls = Handover(lambda e: e._collections.ls)
    context_add = Handover(lambda e: e._collections.context_add)
    context_list = Handover(lambda e: e._collections.context_list)

    context_rm = Handover(lambda e: e._collections.context_rm)

    # -- what the daemon needs: its vault, safe note paths, changed files (service/live.py) --

    vault_collection = Handover(lambda e: e._live.vault_collection)
    note_path = Handover(lambda e: e._live.note_path)
    note_title = Handover(lambda e: e._live.note_title)
    update_changed = Handover(lambda e: e._live.update_changed)
    expand_changes = Handover(lambda e: e._live.expand_changes)

    # -- Convex sync (service/sync.py) -----------------------------------------------------

    @property
    def sync_timeout(self) -> float:
        """The sync client's time limit in seconds (tests shorten it)."""
        return self._sync.sync_timeout

    @sync_timeout.setter
    def sync_timeout(self, seconds: float) -> None:
        self._sync.sync_timeout = seconds

    @property
    def sync_backoff(self) -> Backoff:
        """The sync client's retry delays (tests shorten them)."""
        return self._sync.sync_backoff

    @sync_backoff.setter
    def sync_backoff(self, backoff: Backoff) -> None:
        self._sync.sync_backoff = backoff

    sync_configured = Handover(lambda e: e._sync.sync_configured)
    sync_init = Handover(lambda e: e._sync.sync_init)
    sync_engine = Handover(lambda e: e._sync.sync_engine)
    sync_now = Handover(lambda e: e._sync.sync_now)
    sync_status = Handover(lambda e: e._sync.sync_status)
    sync_pending = Handover(lambda e: e._sync.sync_pending)
    sync_check = Handover(lambda e: e._sync.sync_check)
    cloud_search = Handover(lambda e: e._sync.cloud_search)

    # -- the note panel (service/panel.py) and deep search (service/deep.py) ----------------

    note_panel = Handover(lambda e: e._panel.note_panel)
    deep_search = Handover(lambda e: e._deep.deep_search)

    def vault_name(self, vault: str | None = None) -> str:
        """The collection of the vault memory calls act on (a name, a folder, or the default)."""
        return self.memory.vault(vault).name

    # -- writing notes (service/notes.py, service/notes_move.py) ---------------------------

    note_create = Handover(lambda e: e._note_writer.note_create)
    note_edit = Handover(lambda e: e._note_writer.note_edit)
    note_link = Handover(lambda e: e._note_writer.note_link)
    note_delete = Handover(lambda e: e._note_writer.note_delete)
    note_move = Handover(lambda e: e._note_mover.note_move)

    # -- model health (service/model_health.py) ---------------------------------------------

    query_stages = Handover(lambda e: e._model_health.query_stages)
    model_status = Handover(lambda e: e._model_health.model_status)
    model_checks = Handover(lambda e: e._model_health.model_checks)

    # -- status, doctor, cleanup and the benchmark (service/upkeep.py) ---------------------

    status = Handover(lambda e: e._upkeep.status)
    language_report = Handover(lambda e: e._upkeep.language_report)
    cleanup = Handover(lambda e: e._upkeep.cleanup)
    doctor = Handover(lambda e: e._upkeep.doctor)
    check_links = Handover(lambda e: e._upkeep.check_links)
    bench = Handover(lambda e: e._upkeep.bench)

    # -- rebuilding the index (service/rebuild.py) -----------------------------------------

    rebuild = Handover(lambda e: e._rebuild.rebuild)

    # -- tags (service/tags.py) -----------------------------------------------------------

    def tags(self, collections: Sequence[str] = (), sort: str = "name") -> TagList:
        """Every tag with its number of notes, as Obsidian's tag pane shows them: case
        ignored, nested tags after their parent, whose count includes their notes."""
        from engram.service.tags import tag_list

        return tag_list(self, collections, sort)

    # -- the graph (service/graph.py) ------------------------------------------------------

    backlinks = Handover(lambda e: e.graph.backlinks)
    links = Handover(lambda e: e.graph.links)
    unresolved = Handover(lambda e: e.graph.unresolved)
    orphans = Handover(lambda e: e.graph.orphans)
    neighbors = Handover(lambda e: e.graph.neighbors)
    path = Handover(lambda e: e.graph.path)
    rank = Handover(lambda e: e.graph.rank)
    themes = Handover(lambda e: e.graph.themes)

    # -- the typed graph and its files (service/graph_files.py) ---------------------------

    typed_neighbors = Handover(lambda e: e.graph_files.neighbors)
    graph_export = Handover(lambda e: e.graph_files.export)
    graph_colours = Handover(lambda e: e.graph_files.colours)

    # -- the raw ledger and reflections (service/ledger.py, service/reflect.py) -----------

    ledger_append = Handover(lambda e: e.ledger.append)
    ledger_observe = Handover(lambda e: e.ledger.observe)
    ledger_archive = Handover(lambda e: e.ledger.archive)
    reflect = Handover(lambda e: e.reflections.reflect)
