"""The local Engram: every operation run in this process.

Domain services are composed here, each given what it needs; the operations a face calls stay
one flat set of methods (service/operations.py lists them), each a one-line hand-over to the
service that owns it. `Engram` is the core (settings, the index, the clock) and holds every
part; no part inherits another.
"""

from __future__ import annotations

import logging
from functools import cached_property
from typing import TYPE_CHECKING, Any

from engram.search.fusion import CANDIDATE_LIMIT
from engram.service.core import Core
from engram.service.names import Named, as_link, find_named
from engram.service.retrieval import DEFAULT_MAX_BYTES, RetrievalService
from engram.vault.names import DEFAULT_SECTION

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
    from pathlib import Path

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
    from engram.index import embed as embedding
    from engram.index import indexer
    from engram.index.languages import LanguageReport
    from engram.memory import wake as wk
    from engram.memory.archive import Move
    from engram.memory.ledger_raw import AppendResult
    from engram.memory.model import Fact
    from engram.memory.neighbours import Neighbours
    from engram.memory.observe import ObserveResult
    from engram.memory.results import (
        ContextResult,
        DailyResult,
        LifecycleChange,
        RecallResult,
        SessionEnd,
        SupersedeResult,
        VaultInfo,
        WakeResult,
    )
    from engram.models.protocols import Embedder, Generator, GGUFInfo, Reranker
    from engram.search.query import ParsedQuery
    from engram.search.results import Document, QueryRun, SearchResult
    from engram.search.vector import VectorHit
    from engram.secrets import KeyringLike
    from engram.service.collections import (
        CollectionInfo,
        CollectionsService,
        ContextEntry,
        Listing,
    )
    from engram.service.core import Check
    from engram.service.deep import DeepSearchResult, DeepSearchService
    from engram.service.graph import GraphService
    from engram.service.graph_files import (
        ColourPlan,
        GraphExport,
        GraphFiles,
        TypedNeighborhood,
    )
    from engram.service.hybrid import HybridService
    from engram.service.ledger import LedgerService
    from engram.service.live import LiveService
    from engram.service.memory import MemoryService, VaultCtx
    from engram.service.memory_recall import RecallService
    from engram.service.memory_write import FactWriter
    from engram.service.model_health import ModelHealthService, ModelState
    from engram.service.notes import NoteWriter
    from engram.service.notes_base import NoteAccess
    from engram.service.notes_move import NoteMover
    from engram.service.panel import NotePanel, PanelService
    from engram.service.rebuild import Progress, RebuildReport, RebuildService
    from engram.service.reflect import ReflectResult, ReflectService
    from engram.service.semantic import EmbeddingState, ModelsList, SemanticService
    from engram.service.sync import SyncCheck, SyncService, SyncSetup, SyncStatus
    from engram.service.tags import TagList
    from engram.service.upkeep import BenchReport, CleanupReport, Status, UpkeepService
    from engram.store.filters import Filters
    from engram.store.search import FtsHit
    from engram.sync.client import Backoff
    from engram.sync.engine import SyncEngine, SyncReport
    from engram.vault.changes import NoteChange

log = logging.getLogger(__name__)


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
        """Derived work once files are indexed: the links resolved, the graph index file of
        each vault whose graph changed, then the fact rows of the fact notes that changed."""
        self.graph.resolve_links(specs)
        try:
            self.graph_files.refresh([s.name for s in specs])
        except OSError as exc:  # a read-only vault: the index itself is fine
            log.warning("graph-index.json not written: %s", exc)
        self.memory.refresh_facts(report)

    # -- indexing, keyword search and documents (service/retrieval.py) ---------------------

    def update(
        self,
        collections: Iterable[str] = (),
        progress: indexer.Progress | None = None,
        only_paths: dict[str, set[str]] | None = None,
        force: bool = False,
    ) -> indexer.UpdateReport:
        """Re-index the collections (all by default) incrementally."""
        return self._retrieval.update(collections, progress, only_paths, force)

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

    def parse(
        self, query: str, collections: Iterable[str] = (), filters: Filters | None = None
    ) -> ParsedQuery:
        """Parse a query and merge flag filters; unknown collections are an error."""
        return self._retrieval.parse(query, collections, filters)

    def search(
        self,
        query: str,
        n: int | None = 10,
        collections: Iterable[str] = (),
        min_score: float = 0.0,
        full: bool = False,
        filters: Filters | None = None,
        with_snippets: bool = True,
    ) -> list[SearchResult]:
        """BM25 search: documents ranked by keyword relevance, best passage highlighted."""
        return self._retrieval.search(
            query, n, collections, min_score, full, filters, with_snippets
        )

    def result_from_hit(
        self,
        conn: Any,
        hit: FtsHit,
        q: ParsedQuery,
        score: float,
        full: bool = False,
        with_snippet: bool = True,
    ) -> SearchResult:
        """A SearchResult for a matched document: snippet, line, context."""
        return self._retrieval.result_from_hit(conn, hit, q, score, full, with_snippet)

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

    def multi_get(
        self, spec: str, max_bytes: int = DEFAULT_MAX_BYTES, max_lines: int | None = None
    ) -> list[Document]:
        """Several documents: a glob, or a comma-separated list of paths, #docids, titles,
        aliases or `[[links]]`."""
        return self._retrieval.multi_get(spec, max_bytes, max_lines)

    # -- models, embeddings and vector search (service/semantic.py) ------------------------

    def embedder(self) -> Embedder:
        """The configured embedding model, loaded once per process."""
        return self._semantic.embedder()

    def model_spec(self, role: str) -> str | None:
        """The configured spec of a model role (embed, rerank, generate)."""
        return self._semantic.model_spec(role)

    def model_path(self, role: str) -> Path:
        """The local file of a role's model, or UnavailableError saying how to get it."""
        return self._semantic.model_path(role)

    def models_list(self) -> ModelsList:
        """Each role's configured model and whether it is on disk, plus every cached model."""
        return self._semantic.models_list()

    def models_pull(
        self, spec: str | None = None, progress: Callable[[str], None] | None = None
    ) -> GGUFInfo:
        """Download (and convert) a model: a spec, or the embedding model by default."""
        return self._semantic.models_pull(spec, progress)

    def models_info(self, spec: str) -> GGUFInfo:
        """What a GGUF says about itself (a path, a spec, or a role name)."""
        return self._semantic.models_info(spec)

    def embed(
        self,
        collections: Iterable[str] = (),
        force: bool = False,
        progress: embedding.Progress | None = None,
        say: Callable[[str], None] | None = None,
    ) -> embedding.EmbedReport:
        """Chunk and embed what has no vector yet (all with `force`)."""
        return self._semantic.embed(collections, force, progress, say)

    def prepare_default_embedder(self, say: Callable[[str], None] | None = None) -> None:
        """Pull a built-in embedding model (default."""
        self._semantic.prepare_default_embedder(say)

    def embed_if_available(
        self, collections: Iterable[str] = (), progress: embedding.Progress | None = None
    ) -> embedding.EmbedReport | None:
        """Embed what changed when an embedding model and sqlite-vec are there."""
        return self._semantic.embed_if_available(collections, progress)

    def vsearch(
        self,
        query: str,
        n: int | None = 10,
        collections: Iterable[str] = (),
        min_score: float = 0.0,
        full: bool = False,
        filters: Filters | None = None,
        with_snippets: bool = True,
        chunks: bool = False,
    ) -> list[SearchResult]:
        """Vector search: documents whose passages are closest in meaning to the query."""
        return self._semantic.vsearch(
            query, n, collections, min_score, full, filters, with_snippets, chunks
        )

    def result_from_vector_hit(
        self,
        conn: Any,
        hit: VectorHit,
        q: ParsedQuery,
        full: bool = False,
        with_snippet: bool = True,
        chunks: bool = False,
    ) -> SearchResult:
        """A SearchResult for a document found by meaning: best passage, line, context."""
        return self._semantic.result_from_vector_hit(conn, hit, q, full, with_snippet, chunks)

    def related_notes(self, collection: str, path: str, n: int = 5) -> list[SearchResult]:
        """Notes closest in meaning to a note (the mean of its passage vectors); no model call."""
        return self._semantic.related_notes(collection, path, n)

    def embedding_state(self) -> EmbeddingState:
        """Which model the stored vectors belong to, and how much is embedded."""
        return self._semantic.embedding_state()

    # -- memory: vaults and reading facts (service/memory.py) -------------------------------

    def init_vault(
        self,
        path: str,
        name: str | None = None,
        facts_root: str | None = None,
        config_dir: str | None = None,
        index: bool = True,
        template: bool = True,
    ) -> VaultInfo:
        """Register a folder as the default vault."""
        return self.memory.init_vault(path, name, facts_root, config_dir, index, template)

    def fact_get(self, ref: str, vault: str | None = None) -> Fact:
        """One fact by id (or unique id prefix, file name, vault path), as its note says now."""
        return self.memory.fact_get(ref, vault)

    def fact_list(
        self,
        fact_type: str | None = None,
        tag: str | None = None,
        scope: str | None = None,
        states: tuple[str, ...] = ("active", "dormant"),
        tier_name: str | None = None,
        limit: int | None = 50,
        vault: str | None = None,
        order: str = "created",
    ) -> list[Fact]:
        """Facts, newest first (or by importance), filtered by type, tag, scope, state, tier."""
        return self.memory.fact_list(fact_type, tag, scope, states, tier_name, limit, vault, order)

    def recent_facts(
        self, limit: int = 20, fact_type: str | None = None, vault: str | None = None
    ) -> list[Fact]:
        """The newest live facts (for the plugin's panel and agents)."""
        return self.memory.recent_facts(limit, fact_type, vault)

    # -- memory: writing facts (service/memory_write.py) ----------------------------------

    def fact_add(
        self,
        text: str,
        fact_type: str | None = None,
        title: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        tags: Iterable[str] = (),
        entities: Iterable[str] = (),
        scope: str | None = None,
        source: str | None = None,
        created_by: str | None = None,
        supersedes: str | None = None,
        contradicts: Iterable[str] = (),
        vault: str | None = None,
    ) -> Fact:
        """Store a fact as a new note (type and importance inferred when not given)."""
        return self._fact_writer.fact_add(
            text,
            fact_type,
            title,
            importance,
            confidence,
            tags,
            entities,
            scope,
            source,
            created_by,
            supersedes,
            contradicts,
            vault,
        )

    def fact_update(
        self,
        ref: str,
        text: str | None = None,
        title: str | None = None,
        fact_type: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        tags: Iterable[str] | None = None,
        entities: Iterable[str] | None = None,
        scope: str | None = None,
        lifecycle: str | None = None,
        vault: str | None = None,
    ) -> Fact:
        """Change a fact's note: only the named fields; a type change moves it to its folder."""
        return self._fact_writer.fact_update(
            ref,
            text,
            title,
            fact_type,
            importance,
            confidence,
            tags,
            entities,
            scope,
            lifecycle,
            vault,
        )

    def fact_archive(self, ref: str, prune: bool = False, vault: str | None = None) -> Fact:
        """Archive a fact (it stays where it is); `prune` also moves it to the archive folder."""
        return self._fact_writer.fact_archive(ref, prune, vault)

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

    def fact_sweep(self, dry_run: bool = False, vault: str | None = None) -> list[LifecycleChange]:
        """Move idle facts active → dormant → archived (and recalled ones back to active)."""
        return self._fact_writer.fact_sweep(dry_run, vault)

    # -- memory: recall, context, daily notes, wake (service/memory_recall.py) -------------

    def fact_relevance(
        self, v: VaultCtx, query: str, n: int, doc_ids: Sequence[int]
    ) -> dict[int, tuple[float, str]]:
        """Hybrid (keyword + vector, fused) relevance of fact documents."""
        return self._recall.fact_relevance(v, query, n, doc_ids)

    def neighbours_for(self, v: VaultCtx) -> Neighbours:
        """Neighbours over the resolved link graph."""
        return self._recall.neighbours_for(v)

    def recall(
        self,
        query: str = "",
        n: int = 10,
        fact_type: str | None = None,
        tags: Iterable[str] = (),
        scope: str | None = None,
        since: str | None = None,
        until: str | None = None,
        tier_name: str | None = None,
        include_notes: bool = False,
        states: tuple[str, ...] | None = None,
        vault: str | None = None,
        agent: str | None = None,
        literal: bool = False,
    ) -> RecallResult:
        """Facts ranked by relevance × importance × recency (docs/memory.md has the formula);
        the query's time words are a date window, its question a fact type (unless literal)."""
        return self._recall.recall(
            query,
            n,
            fact_type,
            tags,
            scope,
            since,
            until,
            tier_name,
            include_notes,
            states,
            vault,
            agent,
            literal,
        )

    def memory_context(
        self,
        query: str | None = None,
        profile: str = "default",
        budget: int = 4000,
        vault: str | None = None,
        neighbours: Neighbours | None = None,
    ) -> ContextResult:
        """Context for an agent: facts by tier."""
        return self._recall.memory_context(query, profile, budget, vault, neighbours)

    def daily(self, day: str | None = None, vault: str | None = None) -> DailyResult:
        """Regenerate a day's note (today by default; a date or phrase like yesterday)."""
        return self._recall.daily(day, vault)

    def checkpoint(
        self,
        working_on: str,
        focus: str | None = None,
        blocked: str | None = None,
        urgent: bool = False,
        vault: str | None = None,
    ) -> wk.Checkpoint:
        """Save what the agent is doing and raise the dirty-exit flag."""
        return self._recall.checkpoint(working_on, focus, blocked, urgent, vault)

    def wake(self, vault: str | None = None) -> WakeResult:
        """Bootstrap context: dirty exit?."""
        return self._recall.wake(vault)

    def end_session(
        self,
        summary: str | None = None,
        created_by: str | None = None,
        vault: str | None = None,
    ) -> SessionEnd:
        """Clear the dirty-exit flag; with a summary, store it as a handoff fact first."""
        return self._recall.end_session(summary, created_by, vault)

    # -- hybrid query (service/hybrid.py) ---------------------------------------------------

    def reranker(self) -> Reranker:
        """The configured reranker, loaded once per process."""
        return self._hybrid.reranker()

    def generator(self) -> Generator:
        """The configured query-expansion model, loaded once per process."""
        return self._hybrid.generator()

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

    def query_run(
        self,
        query: str,
        n: int | None = 10,
        collections: Iterable[str] = (),
        min_score: float = 0.0,
        full: bool = False,
        filters: Filters | None = None,
        with_snippets: bool = True,
        chunks: bool = False,
        expand: bool = True,
        rerank: bool = True,
        candidate_limit: int = CANDIDATE_LIMIT,
        explain: bool = False,
        min_similarity: float | None = None,
    ) -> QueryRun:
        """Expansion + BM25 + vectors, fused by RRF, reranked, blended (each if available)."""
        return self._hybrid.query_run(
            query,
            n,
            collections,
            min_score,
            full,
            filters,
            with_snippets,
            chunks,
            expand,
            rerank,
            candidate_limit,
            explain,
            min_similarity,
        )

    # -- collections and contexts (service/collections.py) ---------------------------------

    def collection_add(
        self,
        path: str,
        name: str | None = None,
        mask: str | None = None,
        ignore: tuple[str, ...] = (),
    ) -> CollectionInfo:
        """Register a folder as a collection (not yet indexed: call update)."""
        return self._collections.collection_add(path, name, mask, ignore)

    def collection_list(self) -> list[CollectionInfo]:
        """Every collection with its document count."""
        return self._collections.collection_list()

    def collection_show(self, name: str) -> CollectionInfo:
        """One collection's settings, contexts and counts."""
        return self._collections.collection_show(name)

    def collection_remove(self, name: str) -> int:
        """Forget a collection and drop its documents from the index; return how many."""
        return self._collections.collection_remove(name)

    def collection_rename(self, old: str, new: str) -> None:
        """Rename a collection in the config and the index."""
        self._collections.collection_rename(old, new)

    def ls(self, target: str | None = None) -> Listing:
        """Collections, or the indexed files under `collection[/path]`."""
        return self._collections.ls(target)

    def context_add(self, target: str, text: str) -> ContextEntry:
        """Attach a description to everything under a target (a path, engram:// URI or /)."""
        return self._collections.context_add(target, text)

    def context_list(self) -> list[ContextEntry]:
        """Every context, global first."""
        return self._collections.context_list()

    def context_rm(self, target: str) -> None:
        """Remove the context set on a target."""
        self._collections.context_rm(target)

    # -- what the daemon needs: its vault, safe note paths, changed files (service/live.py) --

    def vault_collection(self, folder: str | Path) -> str:
        """The collection rooted at `folder`; added (named after the folder) when there is none."""
        return self._live.vault_collection(folder)

    def note_path(self, collection: str, path: str) -> str:
        """A collection-relative note path, normalized; anything leaving the folder is refused."""
        return self._live.note_path(collection, path)

    def note_title(self, collection: str, rel: str) -> str:
        """A note's title as the index has it, else its file name."""
        return self._live.note_title(collection, rel)

    def update_changed(
        self, collection: str, rels: Iterable[str], progress: indexer.Progress | None = None
    ) -> indexer.UpdateReport:
        """Index what changed at these paths (the watcher's and the plugin's reindex call)."""
        return self._live.update_changed(collection, rels, progress)

    def expand_changes(self, collection: str, rels: Iterable[str]) -> set[str]:
        """The vault files to look at again for changed paths (a folder: what it holds)."""
        return self._live.expand_changes(collection, rels)

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

    def sync_configured(self, vault: str | None = None) -> bool:
        """True when the vault's facts sync with Convex."""
        return self._sync.sync_configured(vault)

    def sync_init(
        self,
        url: str,
        token: str,
        auth: str | None = None,
        device: str | None = None,
        interval: int | None = None,
        vault: str | None = None,
        check: bool = True,
    ) -> SyncSetup:
        """Point a vault at a Convex deployment and keep its credentials (checked first)."""
        return self._sync.sync_init(url, token, auth, device, interval, vault, check)

    def sync_engine(
        self,
        vault: str | None = None,
        run_local: Callable[..., Awaitable[Any]] | None = None,
    ) -> SyncEngine:
        """A sync run for a vault; `run_local` runs its index and note work."""
        return self._sync.sync_engine(vault, run_local)

    def sync_now(
        self, vault: str | None = None, push: bool = True, pull: bool = True
    ) -> SyncReport:
        """Push the outbox and pull Convex's changes now (blocking)."""
        return self._sync.sync_now(vault, push, pull)

    def sync_status(self, vault: str | None = None) -> SyncStatus:
        """Configured?, pending ops, parked errors, conflicts, last sync and last error."""
        return self._sync.sync_status(vault)

    def sync_pending(self, vault: str | None = None) -> int:
        """How many ops wait to be sent (0 when sync is not configured)."""
        return self._sync.sync_pending(vault)

    def sync_check(self, vault: str | None = None) -> SyncCheck:
        """Compare every fact note with Convex, changing nothing."""
        return self._sync.sync_check(vault)

    def cloud_search(self, query: str, n: int = 10, vault: str | None = None) -> list[Any]:
        """Live facts in Convex matching `query`, best first (deep search's cloud half)."""
        return self._sync.cloud_search(query, n, vault)

    # -- the note panel (service/panel.py) and deep search (service/deep.py) ----------------

    def note_panel(self, collection: str, rel: str) -> NotePanel:
        """What the fact panel shows for a note (properties, fact, backlinks, related, coverage)."""
        return self._panel.note_panel(collection, rel)

    def deep_search(self, query: str, n: int = 10, vault: str | None = None) -> DeepSearchResult:
        """Facts and notes by local recall, fused with Convex's facts when sync is configured."""
        return self._deep.deep_search(query, n, vault)

    def vault_name(self, vault: str | None = None) -> str:
        """The collection of the vault memory calls act on (a name, a folder, or the default)."""
        return self.memory.vault(vault).name

    # -- writing notes (service/notes.py, service/notes_move.py) ---------------------------

    def note_create(
        self,
        path: str | None = None,
        *,
        title: str | None = None,
        body: str = "",
        frontmatter: Mapping[str, Any] | None = None,
        folder: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Create a note; an existing file is never overwritten."""
        return self._note_writer.note_create(
            path,
            title=title,
            body=body,
            frontmatter=frontmatter,
            folder=folder,
            dry_run=dry_run,
            collection=collection,
        )

    def note_edit(
        self,
        note: str,
        *,
        append: str | None = None,
        prepend: str | None = None,
        heading: str | None = None,
        section: str | None = None,
        find: str | None = None,
        replace: str | None = None,
        regex: bool = False,
        count: int = 0,
        properties: Mapping[str, Any] | None = None,
        remove_properties: Iterable[str] = (),
        expected_hash: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Edit a note: properties, find/replace, a section, prepend/append (service/notes.py)."""
        return self._note_writer.note_edit(
            note,
            append=append,
            prepend=prepend,
            heading=heading,
            section=section,
            find=find,
            replace=replace,
            regex=regex,
            count=count,
            properties=properties,
            remove_properties=remove_properties,
            expected_hash=expected_hash,
            dry_run=dry_run,
            collection=collection,
        )

    def note_link(
        self,
        source: str,
        target: str,
        *,
        section: str = DEFAULT_SECTION,
        display: str | None = None,
        expected_hash: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Add `- [[target]]` at the end of `section` in `source`, unless it links there already."""
        return self._note_writer.note_link(
            source,
            target,
            section=section,
            display=display,
            expected_hash=expected_hash,
            dry_run=dry_run,
            collection=collection,
        )

    def note_delete(
        self,
        note: str,
        *,
        expected_hash: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Move a note to the vault's `.trash/` folder, as Obsidian does."""
        return self._note_writer.note_delete(
            note, expected_hash=expected_hash, dry_run=dry_run, collection=collection
        )

    def note_move(
        self,
        note: str,
        new_path: str,
        *,
        expected_hash: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Move or rename a note and rewrite every link to it, all at once."""
        return self._note_mover.note_move(
            note, new_path, expected_hash=expected_hash, dry_run=dry_run, collection=collection
        )

    # -- model health (service/model_health.py) ---------------------------------------------

    def query_stages(self) -> dict[str, str]:
        """What `engram query` would run now: "on ..." or "off (why)" per stage."""
        return self._model_health.query_stages()

    def model_status(self) -> dict[str, ModelState]:
        """Each role's model for the status bar: spec, id and loaded / available / missing."""
        return self._model_health.model_status()

    def model_checks(self) -> list[Check]:
        """Doctor's model checks: the llama.cpp build, each model loading, coverage, stages."""
        return self._model_health.model_checks()

    # -- status, doctor, cleanup and the benchmark (service/upkeep.py) ---------------------

    def status(self) -> Status:
        """What is indexed, where, and how fresh."""
        return self._upkeep.status()

    def language_report(self) -> LanguageReport:
        """Notes per language, and advice when the embedder does not serve a meaningful share."""
        return self._upkeep.language_report()

    def cleanup(self) -> CleanupReport:
        """Drop documents of removed collections and orphaned texts, then compact the file."""
        return self._upkeep.cleanup()

    def doctor(self, full: bool = False) -> list[Check]:
        """Check the installation, configuration and index; each problem with a fix."""
        return self._upkeep.doctor(full)

    def check_links(self, collection: str, full: bool = False) -> Check:
        """Doctor's link check: do a collection's stored links resolve as they would now?"""
        return self._upkeep.check_links(collection, full)

    def bench(
        self,
        queries: Path,
        qrels: Path,
        mode: str = "search",
        n: int = 100,
        collections: tuple[str, ...] = (),
        run_out: Path | None = None,
        snippets: bool = False,
        expand: bool = True,
        rerank: bool = True,
    ) -> BenchReport:
        """Run BEIR-format queries; report nDCG@10, Recall@10/100, MRR@10 and latency."""
        return self._upkeep.bench(
            queries, qrels, mode, n, collections, run_out, snippets, expand, rerank
        )

    # -- rebuilding the index (service/rebuild.py) -----------------------------------------

    def rebuild(self, progress: Progress | None = None) -> RebuildReport:
        """Make every derived table again from the files in a new index file and swap it in."""
        return self._rebuild.rebuild(progress)

    # -- tags (service/tags.py) -----------------------------------------------------------

    def tags(self, collections: Sequence[str] = (), sort: str = "name") -> TagList:
        """Every tag with its number of notes, as Obsidian's tag pane shows them: case
        ignored, nested tags after their parent, whose count includes their notes."""
        from engram.service.tags import tag_list

        return tag_list(self, collections, sort)

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
