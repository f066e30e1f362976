"""`query`: hybrid retrieval with expansion, fusion, reranking and blending, cached models."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from engram.errors import InvalidInputError, UnavailableError
from engram.index import languages
from engram.models.protocols import ModelError
from engram.search import spelling
from engram.search.bm25 import match_expression
from engram.search.bm25 import snippets as bm25_snippets
from engram.search.fusion import CANDIDATE_LIMIT
from engram.search.query import ParsedQuery
from engram.search.results import Passage, QueryRun, SearchResult
from engram.store import llmcache, vectors
from engram.store.filters import Filters
from engram.store.search import content_text

if TYPE_CHECKING:
    from engram.models.protocols import Generator, Reranker
    from engram.search.hybrid import Candidate
    from engram.service.core import Core
    from engram.service.retrieval import RetrievalService
    from engram.service.semantic import SemanticService

_BROKEN_HINT = "check models.{role} (`engram models info {role}`, `engram doctor`)"


def _key(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


class HybridService:
    """query: the best ranking every available model can give; keeps the reranker and the
    expansion model this process loaded."""

    def __init__(self, core: Core, retrieval: RetrievalService, semantic: SemanticService) -> None:
        self._core = core
        self._retrieval = retrieval
        self._semantic = semantic
        self._reranker: Reranker | None = None
        self._generator: Generator | None = None

    def drop_models(self) -> None:
        """Forget the loaded reranker and generator (the configured models changed)."""
        self._reranker = self._generator = None

    def loaded(self, role: str) -> Reranker | Generator | None:
        """The reranker or generator if this process has loaded it; loads nothing."""
        return self._reranker if role == "rerank" else self._generator

    def reranker(self) -> Reranker:
        """The configured reranker, loaded once per process; UnavailableError (with what to
        check) when it is missing or does not load."""
        if self._reranker is None:
            from engram.models.llama_rerank import load_reranker

            path = self._semantic.model_path("rerank")
            try:
                self._reranker = load_reranker(path, self._core.settings.n_threads)
            except ModelError as exc:
                raise UnavailableError(str(exc), _BROKEN_HINT.format(role="rerank")) from None
        return self._reranker

    def generator(self) -> Generator:
        """The configured query-expansion model, loaded once per process; UnavailableError
        (with what to check) when it is missing or does not load."""
        if self._generator is None:
            from engram.models.llama_generate import load_generator

            path = self._semantic.model_path("generate")
            try:
                self._generator = load_generator(path, self._core.settings.n_threads)
            except ModelError as exc:
                raise UnavailableError(str(exc), _BROKEN_HINT.format(role="generate")) from None
        return self._generator

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
        return self.query_run(
            query, n, collections, min_score, full, filters, with_snippets, **options
        ).results

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
        """Expansion + BM25 + vectors, fused by RRF, reranked, blended (each if available).

        `min_similarity` drops documents only the vector lists found with no passage at least
        that similar to the query (see `hybrid.run`)."""
        from engram.search import hybrid

        q = self._retrieval.parse(query, collections, filters)
        if not q.has_terms:
            raise InvalidInputError("query needs words to search for")
        spelled = spelling.correct(self._core.db.conn, q)  # for the keyword and vector lists
        q = spelled.query
        notice = spelled.notice()
        notices: list[str] = [notice] if notice else []
        unloaded: dict[str, str] = {}  # stages whose model is configured but does not load
        outcome = hybrid.run(
            self._core.db.conn,
            q,
            n,
            max(1, candidate_limit),
            self._nearest_fn(q, notices),
            self._expand_fn(notices, unloaded) if expand else None,
            self._rerank_fn(notices, unloaded) if rerank else None,
            min_similarity,
            embed_serves=languages.served(self._core.settings.embed_model),
        )
        stages = {**outcome.stages, **unloaded}
        notices += outcome.notices
        if not expand:
            stages["expansion"] = "off (--no-expand)"
        if not rerank:
            stages["rerank"] = "off (--no-rerank)"
        results = self._results(outcome.candidates, q, full, with_snippets, chunks, explain)
        if spelled.corrected:
            results = [replace(r, spelling=q.text) for r in results]
        return QueryRun(
            [r for r in results if r.score >= min_score], stages, tuple(notices), outcome.expansions
        )

    def _nearest_fn(self, q: ParsedQuery, notices: list[str]) -> Any:
        try:
            embedder = self._semantic.embedder_for_index()
        except UnavailableError as exc:
            notices.append(f"keyword search only: {exc.message}")
            return None
        import numpy as np

        from engram.search import vector as vector_search

        index = self._semantic.vector_index()

        def nearest(text: str, depth: int) -> list[vector_search.VectorHit]:
            vector = np.asarray(embedder.embed_query(text), dtype=np.float32)
            # the calling thread's own connection (hybrid.run may call this on another)
            return vector_search.search(self._core.db.conn, index, vector, q.filters, depth)

        return nearest

    def _expand_fn(self, notices: list[str], unloaded: dict[str, str]) -> Any:
        if self._core.settings.generate_model is None:
            return None
        try:
            gen = self.generator()
        except UnavailableError as exc:
            notices.append(f"no query expansion: {exc.message}")
            unloaded["expansion"] = "off (generator model unavailable)"
            return None

        def expand(text: str) -> list[str]:
            key = _key(gen.model_id, "expand", text)
            hit = llmcache.get_many(self._core.db.conn, "expand", [key])
            if key in hit:
                return list(json.loads(hit[key]))
            try:
                out = gen.expand(text, 2)
            except ModelError as exc:
                raise UnavailableError(str(exc)) from None
            with self._core.db.write() as conn:
                llmcache.put_many(conn, "expand", [(key, json.dumps(out))])
            return out

        return expand

    def _rerank_fn(self, notices: list[str], unloaded: dict[str, str]) -> Any:
        if self._core.settings.rerank_model is None:
            return None
        try:
            model = self.reranker()
        except UnavailableError as exc:
            notices.append(f"no reranking: {exc.message}")
            unloaded["rerank"] = "off (reranker model unavailable)"
            return None

        def rerank(query: str, texts: list[str]) -> list[float]:
            keys = [_key(model.model_id, query, t) for t in texts]
            hit = llmcache.get_many(self._core.db.conn, "rerank", keys)
            todo = [i for i, k in enumerate(keys) if k not in hit]
            if todo:
                try:
                    fresh = model.score(query, [texts[i] for i in todo])
                except ModelError as exc:
                    raise UnavailableError(str(exc)) from None
                with self._core.db.write() as conn:
                    llmcache.put_many(
                        conn,
                        "rerank",
                        [(keys[i], repr(float(s))) for i, s in zip(todo, fresh, strict=True)],
                    )
                hit.update({keys[i]: repr(float(s)) for i, s in zip(todo, fresh, strict=True)})
            return [float(hit[k]) for k in keys]

        return rerank

    def _results(
        self,
        candidates: list[Candidate],
        q: ParsedQuery,
        full: bool,
        with_snippets: bool,
        chunks: bool,
        explain: bool,
    ) -> list[SearchResult]:
        from engram.search import hybrid

        conn = self._core.db.conn
        keyword_first = [
            c
            for c in candidates
            if c.bm25 is not None
            and (
                c.vector is None
                or c.fused.ranks.get("bm25:original", 10**6)
                <= c.fused.ranks.get("vec:original", 10**6)
            )
        ]
        marked: dict[int, str] = {}
        match = match_expression(q)
        if with_snippets and keyword_first and match:
            marked = bm25_snippets(conn, q, match, [c.doc_id for c in keyword_first])
        by_keyword = {c.doc_id for c in keyword_first}
        out = []
        for c in candidates:
            if c.doc_id in by_keyword and c.bm25 is not None:
                hit = replace(c.bm25, snippet=marked.get(c.doc_id, ""))
                result = self._retrieval.result_from_hit(conn, hit, q, c.final, full, with_snippets)
                if chunks:
                    passages = self._keyword_passages(conn, hit.hash, result, q)
                    result = replace(result, passages=passages)
            else:
                assert c.vector is not None
                result = self._semantic.result_from_vector_hit(
                    conn, c.vector, q, full, with_snippets, chunks
                )
            out.append(
                replace(result, score=c.final, explain=hybrid.explain(c) if explain else None)
            )
        return out

    def _keyword_passages(
        self, conn: Any, doc_hash: str, result: SearchResult, q: ParsedQuery
    ) -> tuple[Passage, ...]:
        """--chunks for a document found by keywords: its stored chunks ranked by the query
        words they hold; before `engram embed` has chunked it, the snippet's passage."""
        from engram.search import passages

        needles = [*q.terms, *q.prefixes, *q.phrases]
        rows = vectors.chunks_of(conn, doc_hash)
        if rows:
            text = content_text(conn, doc_hash) or ""
            ranked = passages.by_keywords(text, rows, needles)
            return passages.build(text, ranked, needles, paged=result.page is not None)
        end = result.line + result.snippet.count("\n")
        share = passages.keyword_share(result.snippet, needles)
        return (Passage(result.snippet, result.line, end, share, result.highlights, result.page),)
