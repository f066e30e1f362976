"""Models, embeddings and vector search: models list/pull/info/path, embed, vsearch."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from engram.codec import arg
from engram.errors import InvalidInputError, UnavailableError
from engram.models import sources
from engram.models.protocols import Embedder, GGUFInfo, ModelError
from engram.search import passages as best_passages
from engram.search import snippets
from engram.search.query import ParsedQuery
from engram.search.results import Passage, SearchResult
from engram.secrets import private_dir
from engram.store import documents as docs
from engram.store import pages, vectors
from engram.store.filters import Filters
from engram.store.search import content_text

if TYPE_CHECKING:  # numpy, the chunker and the parser load only when vectors are used
    from engram.index import embed as embedding
    from engram.search import vector as vector_search
    from engram.service.core import Core
    from engram.service.retrieval import RetrievalService

ROLES = ("embed", "rerank", "generate")


@dataclass(frozen=True)
class EmbeddingState:
    """Which model the stored vectors belong to, and how much is embedded."""

    model: str | None  # the model the stored vectors were made by, None before any
    dim: str | None  # their dimension, as the index records it
    configured: str | None  # the embed model the settings name
    chunks: int
    embedded: int  # chunks with a vector
    documents_chunked: int
    queued: int  # texts waiting for a vector
    documents_not_embedded: int  # not chunked yet, or a passage without a vector


@dataclass(frozen=True)
class RoleModel:
    """A role's configured model and whether its file is here (`engram models list`)."""

    spec: str | None  # None: not configured
    path: str | None = None  # the local file, when it resolves
    error: str | None = None  # why it does not resolve

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"available": "available"}

    @property
    def available(self) -> bool:
        """Is the model's file here?"""
        return self.path is not None


@dataclass(frozen=True)
class BuiltInModel:
    """A built-in embedder, the languages it serves, and whether it is prepared."""

    spec: str
    name: str
    languages: str
    prepared: bool
    download_mb: int = arg(wire="downloadMB")


@dataclass(frozen=True)
class CachedModel:
    """A GGUF file in the models cache."""

    path: str
    bytes: int


@dataclass(frozen=True)
class ModelsList:
    """`engram models list`: each role's model, the built-in embedders, the cached files."""

    roles: dict[str, RoleModel]  # by role: embed, rerank, generate
    built_in: tuple[BuiltInModel, ...]
    cached: tuple[CachedModel, ...]
    cache_dir: str


class SemanticService:
    """Everything that needs an embedding model; keeps the embedder and the in-memory vector
    index this process loaded."""

    def __init__(
        self, core: Core, retrieval: RetrievalService, embedder: Embedder | None = None
    ) -> None:
        self._core = core
        self._retrieval = retrieval
        self._embedder = embedder  # tests inject a fake; otherwise loaded on first use
        self._given = embedder is not None
        self._background: Embedder | None = embedder  # the daemon's index job embeds with it
        self._vindex: vector_search.VectorIndex | None = None

    def loaded_embedder(self) -> Embedder | None:
        """The embedder if this process has loaded it (or was given one); loads nothing."""
        return self._embedder

    def vector_index(self) -> vector_search.VectorIndex:
        """The in-memory vector index of this process, made on first use."""
        from engram.search import vector as vector_search

        if self._vindex is None:
            self._vindex = vector_search.VectorIndex()
        return self._vindex

    def forget(self) -> None:
        """Drop the in-memory vector index (the index file was replaced)."""
        self._vindex = None

    def drop_models(self) -> None:
        """Forget the loaded embedders (the configured model changed); a given one stays."""
        if not self._given:
            self._embedder = self._background = None

    def embedder(self) -> Embedder:
        """The configured embedding model, loaded once per process."""
        if self._embedder is None:
            path = self.model_path("embed")
            from engram.models.llama import load_embedder

            try:
                self._embedder = load_embedder(path, self._core.settings.n_threads)
            except ModelError as exc:
                raise UnavailableError(str(exc)) from None
        return self._embedder

    def background_embedder(self) -> Embedder:
        """The embedder the daemon's index job embeds passages with: the same model in its own
        llama.cpp context (a query embedded meanwhile never waits for a batch of passages),
        on `config.background_threads` threads."""
        if self._background is None:
            from engram.config import background_threads
            from engram.models.llama import load_embedder

            path = self.model_path("embed")
            threads = background_threads(self._core.settings.n_threads)
            try:
                self._background = load_embedder(path, threads, context="background")
            except ModelError as exc:
                raise UnavailableError(str(exc)) from None
        return self._background

    def model_spec(self, role: str) -> str | None:
        """The configured spec of a model role (embed, rerank, generate)."""
        if role not in ROLES:
            raise InvalidInputError(f"unknown model role {role!r}; use one of {', '.join(ROLES)}")
        spec: str | None = getattr(self._core.settings, f"{role}_model")
        return spec

    def model_path(self, role: str) -> Path:
        """The local file of a role's model, or UnavailableError saying how to get it."""
        spec = self.model_spec(role)
        if spec is None:
            raise UnavailableError(
                f"no {role} model is configured",
                f"set models.{role} in {self._core.settings.config_file}",
            )
        try:
            return sources.resolve(spec, private_dir(self._core.settings.cache_dir))
        except ModelError as exc:
            raise UnavailableError(str(exc)) from None

    def models_list(self) -> ModelsList:
        """Each role's configured model and whether it is on disk, plus every cached model."""
        cache = self._core.settings.cache_dir
        roles = {}
        for role in ROLES:
            spec = self.model_spec(role)
            path = error = None
            if spec is not None:
                try:
                    path = str(sources.resolve(spec, cache))
                except ModelError as exc:
                    error = str(exc)
            roles[role] = RoleModel(spec, path, error)
        built_in = tuple(
            BuiltInModel(m.spec, m.name, m.languages, prepared, m.download_mb)
            for m, prepared in sources.built_in_status(cache)
        )
        cached = tuple(CachedModel(str(p), p.stat().st_size) for p in sources.list_models(cache))
        return ModelsList(roles, built_in, cached, str(sources.models_dir(cache)))

    def models_pull(
        self, spec: str | None = None, progress: Callable[[str], None] | None = None
    ) -> GGUFInfo:
        """Download (and convert) a model: a spec, or the embedding model by default."""
        target = spec or self._core.settings.embed_model or sources.DEFAULT_SPEC
        try:
            path = sources.pull(target, private_dir(self._core.settings.cache_dir), progress)
        except ModelError as exc:
            raise UnavailableError(str(exc)) from None
        return self.models_info(str(path))

    def models_info(self, spec: str) -> GGUFInfo:
        """What a GGUF says about itself (a path, a spec, or a role name)."""
        path = self.model_path(spec) if spec in ROLES else None
        if path is None:
            try:
                path = sources.resolve(spec, self._core.settings.cache_dir)
            except ModelError as exc:
                raise UnavailableError(str(exc)) from None
        return sources.info(path)

    def use_embed_model(self, spec: str, progress: Callable[[str], None] | None = None) -> GGUFInfo:
        """Make `spec` the embedding model: prepare it (download or convert, as `models pull`),
        then record it as models.embed in the config file; the next `embed` starts over with
        it (resumably: an interrupted run goes on with the new model)."""
        if "embed_model" in self._core.settings.from_env:
            raise InvalidInputError(
                "ENGRAM_EMBED_MODEL is set, and it decides the embedding model",
                f"unset it, or set it to {spec}",
            )
        info = self.models_pull(spec, progress)
        self._core.edit_config(lambda raw: _set_embed_model(raw, spec))
        return info

    def fit_embed_model(self) -> str | None:
        """At `init`: give a vault mostly in languages the default embedder does not serve the
        multilingual model, unless a model was chosen (config file or ENGRAM_EMBED_MODEL);
        the sentence saying so, or None. The model is prepared by the next `embed`."""
        from engram.index import languages

        settings = self._core.settings
        models = settings.raw.get("models")
        chosen = isinstance(models, dict) and models.get("embed") is not None
        if chosen or "embed_model" in settings.from_env:
            return None
        before = settings.embed_model or sources.DEFAULT_SPEC
        report = languages.report(self._core.db.conn, before)
        if before != sources.DEFAULT_SPEC or not languages.mostly_unserved(report):
            return None
        spec = sources.MULTILINGUAL.spec
        self._core.edit_config(lambda raw: _set_embed_model(raw, spec))
        return languages.chosen_for(report, before, spec)

    def embed(
        self,
        collections: Iterable[str] = (),
        force: bool = False,
        progress: embedding.Progress | None = None,
        say: Callable[[str], None] | None = None,
        background: bool = False,
    ) -> embedding.EmbedReport:
        """Chunk and embed what has no vector yet (all with `force`), preparing the default
        model first when it is missing (`say` reports that step); `background` embeds with
        `background_embedder`."""
        from engram.index import embed as embedding

        self.require_vectors()
        names = list(collections)
        for name in names:
            self._core.require_collection(name)
        self.prepare_default_embedder(say)
        embedder = self.background_embedder() if background else self.embedder()
        return embedding.embed(
            self._core.db, embedder, names, force, progress, pool=self._core.parse_pool
        )

    def prepare_default_embedder(self, say: Callable[[str], None] | None = None) -> None:
        """Pull a built-in embedding model (default, multilingual) when it is the one configured
        and is not prepared yet, as `engram models pull` does: whoever asks to embed wants it.
        Offline, the pull's error says what to do."""
        spec = self._core.settings.embed_model
        if self._embedder is not None or spec not in sources.BUILT_IN:
            return
        try:
            sources.resolve(spec, self._core.settings.cache_dir)
            return
        except ModelError:
            pass
        if say is not None:
            say(f"the {spec} embedding model is not prepared yet: preparing it first")
        try:
            sources.pull(spec, self._core.settings.cache_dir, say)
        except ModelError as exc:
            raise UnavailableError(f"cannot embed without the embedding model: {exc}") from None

    def embed_if_available(
        self, collections: Iterable[str] = (), progress: embedding.Progress | None = None
    ) -> embedding.EmbedReport | None:
        """Embed what changed, in the background (the daemon's index job), when an embedding
        model and sqlite-vec are there; None if not (keyword search needs neither, so
        background indexing must not fail without them)."""
        if not self._can_embed():
            return None
        return self.embed(collections, progress=progress, background=True)

    def _can_embed(self) -> bool:
        """An embedding model (given, or configured and on disk) and sqlite-vec are here."""
        if self._core.settings.embed_model is None or not self._core.db.vec_available:
            return False
        if self._background is not None:
            return True
        try:
            self.model_path("embed")
        except UnavailableError:
            return False
        return True

    def embed_written(self, doc_ids: Sequence[int]) -> None:
        """Embed the passages of notes a write just stored, when the model is at hand (never
        loading a missing one, never failing the write: a later `embed` catches up). Writes
        use the searches' context, not the index job's: in the daemon a write never waits for
        a batch the job embeds at nice 19 (index/turns.py)."""
        if not doc_ids or not self._can_embed():
            return
        from engram.index import embed as embedding

        try:
            embedder = self.embedder()
        except UnavailableError:
            return
        hashes = docs.hashes_of(self._core.db.conn, list(doc_ids))
        embedding.embed_written(self._core.db, embedder, hashes, self._core.parse_pool)

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
        q = self._retrieval.parse(query, collections, filters)
        if not q.text.strip():
            raise InvalidInputError("vsearch needs words to embed (filters alone are not enough)")
        embedder = self.embedder_for_index()
        import numpy as np

        from engram.search import vector as vector_search

        qvec = np.asarray(embedder.embed_query(q.text), dtype=np.float32)
        conn = self._core.db.conn
        hits = vector_search.search(conn, self.vector_index(), qvec, q.filters, n)
        results = [
            self.result_from_vector_hit(conn, h, q, full, with_snippets, chunks) for h in hits
        ]
        return [r for r in results if r.score >= min_score]

    def result_from_vector_hit(
        self,
        conn: Any,
        hit: vector_search.VectorHit,
        q: ParsedQuery,
        full: bool = False,
        with_snippet: bool = True,
        chunks: bool = False,
    ) -> SearchResult:
        """A SearchResult for a document found by meaning: best passage, line, context."""
        doc_id, collection, path, title, doc_hash, _body_line, fact_type = tuple(hit.doc)
        best = hit.chunks[0][0]
        text = content_text(conn, doc_hash) or "" if (with_snippet or full or chunks) else ""
        needles = list(q.terms) + list(q.prefixes) + list(q.phrases)
        passages: tuple[Passage, ...] = ()
        if with_snippet:
            snip = snippets.in_span(text, best.start, best.end, needles)
        else:
            snip = snippets.Snippet("", (), best.start_line)
        paged = pages.is_paged(path) and bool(text)
        if chunks:
            passages = best_passages.build(text, hit.chunks, needles, len(hit.chunks), paged)
        return SearchResult(
            docid=doc_hash[:6],
            collection=collection,
            path=path,
            title=title,
            score=hit.score,
            snippet=snip.text,
            line=snip.line,
            highlights=snip.highlights,
            page=pages.page_at(text, best.start) if paged else None,
            context=self._core.context_for(collection, path),
            fact_type=fact_type,
            body=pages.readable(text) if full else None,
            passages=passages,
            doc_id=doc_id,
        )

    def related_notes(self, collection: str, path: str, n: int = 5) -> list[SearchResult]:
        """Notes closest in meaning to a note (the mean of its passage vectors); no model call."""
        import numpy as np

        from engram.search import vector as vector_search
        from engram.store import admin

        self.require_vectors()
        conn = self._core.db.conn
        row = admin.document_by_path(conn, collection, path)
        if row is None:
            raise InvalidInputError(f"{collection}/{path} is not indexed")
        hashes = list({c.text_hash for c in vectors.chunks_of(conn, row["hash"])})
        blobs = vectors.vectors_of_texts(conn, hashes)
        if not blobs:
            raise UnavailableError(f"{path} has no embeddings yet: run `engram embed`")
        mean = np.mean([np.frombuffer(b, dtype=np.float32) for b in blobs], axis=0)
        mean /= max(float(np.linalg.norm(mean)), 1e-9)
        hits = vector_search.search(
            conn,
            self.vector_index(),
            mean.astype(np.float32),
            Filters(collections=(collection,)),
            n + 1,
        )
        q = self._retrieval.parse("")
        return [
            self.result_from_vector_hit(conn, h, q, with_snippet=False)
            for h in hits
            if int(h.doc[0]) != int(row["id"])
        ][:n]

    def embedding_state(self) -> EmbeddingState:
        """Which model the stored vectors belong to, and how much is embedded."""
        conn = self._core.db.conn
        c = vectors.coverage(conn)
        return EmbeddingState(
            model=docs.get_meta(conn, "embed_model"),
            dim=docs.get_meta(conn, "embed_dim"),
            configured=self._core.settings.embed_model,
            chunks=c["chunks"],
            embedded=c["embedded"],
            documents_chunked=c["documentsChunked"],
            queued=c["queued"],
            documents_not_embedded=c["documentsNotEmbedded"],
        )

    def require_vectors(self) -> None:
        if not self._core.db.vec_available:
            raise UnavailableError(
                f"vector search is unavailable: {self._core.db.vec_error}",
                "pip install sqlite-vec sqlean-py; keyword search (engram search) still works",
            )

    def embedder_for_index(self) -> Embedder:
        """The embedder, after checking the index holds vectors made by it."""
        self.require_vectors()
        stored = docs.get_meta(self._core.db.conn, "embed_model")
        if stored is None or not vectors.has_vectors(self._core.db.conn):
            raise UnavailableError(
                "no embeddings yet: run `engram embed` (keyword search "
                "works meanwhile: engram search)"
            )
        embedder = self.embedder()
        if embedder.model_id != stored:
            raise UnavailableError(
                f"the index holds vectors of {stored}, but the configured model is "
                f"{embedder.model_id}",
                "run `engram embed` to re-embed with the new model",
            )
        return embedder


def _set_embed_model(raw: dict[str, Any], spec: str) -> None:
    """Set models.embed in a parsed config file, keeping the other model settings."""
    models = raw.get("models")
    raw["models"] = {**(models if isinstance(models, dict) else {}), "embed": spec}
