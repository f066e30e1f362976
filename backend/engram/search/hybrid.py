"""The hybrid pipeline: expand -> BM25 + vector lists -> RRF + bonus -> rerank -> blend.

Models arrive as plain callables (already cached by the caller), so this module only
orchestrates; the math lives in `fusion`. Every stage records what it did for --explain. A model
callable that fails raises UnavailableError: the query goes on without that stage and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from engram.errors import UnavailableError
from engram.models import language
from engram.search import bm25, fusion, passages
from engram.search import vector as vector_search
from engram.search.helpers import HELPERS
from engram.search.query import ParsedQuery, parse_query
from engram.search.snippets import body_offset
from engram.store import documents, vectors
from engram.store.search import FtsHit, content_text

ORIGINAL_WEIGHT = 2.0
EXPANSION_WEIGHT = 1.0
# skip expansion when BM25's best hit is this strong and this far ahead (see docs/benchmarks.md)
SKIP_MIN_TOP = 18.0
SKIP_MIN_RATIO = 1.5
RERANK_TEXT_CHARS = 1500

# the documents whose passages are nearest a text (embedded by the model), at most `depth`; the
# caller's closure opens its own connection, as it may run on another thread
Nearest = Callable[[str, int], list[vector_search.VectorHit]]
Expand = Callable[[str], list[str]]
Rerank = Callable[[str, list[str]], list[float]]


@dataclass(frozen=True)
class Candidate:
    """A fused document with everything --explain shows."""

    doc_id: int
    fused: fusion.Fused
    rrf_rank: int  # 1-based position after fusion, before reranking
    retrieval: float  # fused score normalised to 0..1
    rerank: float | None = None
    final: float = 0.0
    bm25: FtsHit | None = None
    vector: vector_search.VectorHit | None = None
    list_scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """The ranked candidates and how each stage went."""

    candidates: list[Candidate]
    stages: dict[str, str]
    expansions: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()  # stages that failed, in words a user can act on


Variant = tuple[str, ParsedQuery, float]  # list name suffix, query, list weight


def run(
    conn: Any,
    q: ParsedQuery,
    limit: int | None,
    candidate_limit: int,
    nearest: Nearest | None,
    expand: Expand | None,
    rerank: Rerank | None,
    min_similarity: float | None = None,
    embed_serves: frozenset[str] | None = None,
) -> Outcome:
    """Rank documents for a query with every stage that is available.

    With `min_similarity`, a document no keyword list found must have a passage at least that
    similar to the query: a vector list ranks every document, related or not (recall uses it).
    `embed_serves` (the embedder's languages, see `fusion.language_trust` and
    `fusion.vector_trust`) lets a keyword list whose hits are in another language than the
    query's give way to the vector list, and a vector list from an embedder that does not read
    the query's or its notes' language give way to the keyword list. Each list's trust and why
    are in `stages` ("trust <list>").
    """
    depth = max(limit or 0, candidate_limit, 50)
    stages: dict[str, str] = {}
    notices: list[str] = []
    # the original query's vector list is found on a helper thread while BM25 ranks here: a
    # query costs the longer of the two, not their sum (search/helpers.py)
    ahead = HELPERS.submit(nearest, q.text, depth) if nearest and q.text.strip() else None
    first = bm25.ranked(conn, q, depth, with_snippets=False)
    notices += first.notices
    variants, expansions = _variants(q, first, expand, stages, notices)
    judged = nearest is not None and embed_serves is not None
    odds = language.odds(q.text) if judged else {}
    lists, bm25_hits, vec_hits = _ranked_lists(
        conn, q, first, variants, depth, (nearest, ahead), odds, embed_serves
    )
    stages["vector"] = "ran" if nearest is not None else "off"
    lists = settled(lists)
    candidates = _fused(lists, bm25_hits, vec_hits)
    for lst in lists if nearest is not None else ():  # with one kind of list, nothing to weigh
        stages[f"trust {lst.name}"] = f"{lst.trust:.2f} ({lst.why})"
    if min_similarity is not None:
        candidates = [c for c in candidates if above_floor(c, min_similarity)]
    candidates = _rerank_stage(conn, q, candidates, candidate_limit, rerank, stages, notices)
    return Outcome(candidates[:limit] if limit else candidates, stages, expansions, tuple(notices))


def _variants(
    q: ParsedQuery,
    first: bm25.Ranking,
    expand: Expand | None,
    stages: dict[str, str],
    notices: list[str],
) -> tuple[list[Variant], tuple[str, ...]]:
    """The original query and its expansions (unless BM25 already has a clear winner)."""
    variants: list[Variant] = [("original", q, ORIGINAL_WEIGHT)]
    expansions: tuple[str, ...] = ()
    raw = [-h.bm25 for h in first.hits]
    if expand is None:
        stages["expansion"] = "off (no generator model)"
    elif fusion.strong_top_hit(raw, SKIP_MIN_TOP, SKIP_MIN_RATIO):
        stages["expansion"] = "skipped (strong, well-separated keyword hit)"
    else:
        try:
            expansions = tuple(e for e in expand(q.text) if e.strip())[:2]
            stages["expansion"] = f"ran ({len(expansions)} expansions)"
        except UnavailableError as exc:
            stages["expansion"] = "failed (searched without expansions)"
            notices.append(f"no query expansion: {exc.message}")
        for i, text in enumerate(expansions, 1):
            variants.append(
                (f"exp{i}", replace(parse_query(text), filters=q.filters), EXPANSION_WEIGHT)
            )
    return variants, expansions


def _ranked_lists(
    conn: Any,
    q: ParsedQuery,
    first: bm25.Ranking,
    variants: list[Variant],
    depth: int,
    vector_lists: tuple[Nearest | None, Future[list[vector_search.VectorHit]] | None],
    odds: dict[str, float],
    embed_serves: frozenset[str] | None,
) -> tuple[list[fusion.RankedList], dict[int, FtsHit], dict[int, vector_search.VectorHit]]:
    """A keyword list and (with a model) a vector list per variant, and each list's hits; the
    original query's vector list may be on its way already (`vector_lists`' future)."""
    nearest, ahead = vector_lists
    lists: list[fusion.RankedList] = []
    bm25_hits: dict[int, FtsHit] = {}
    vec_hits: dict[int, vector_search.VectorHit] = {}
    for name, variant, weight in variants:
        kw = first if name == "original" else bm25.ranked(conn, variant, depth, False)
        for h in kw.hits:
            bm25_hits.setdefault(h.id, h)
        trust, why = keyword_list_trust(conn, kw, odds, embed_serves)
        lists.append(
            fusion.RankedList(
                f"bm25:{name}",
                weight,
                tuple(str(h.id) for h in kw.hits),
                tuple(-h.bm25 for h in kw.hits),
                trust,
                why,
            )
        )
        if nearest is not None and variant.text.strip():
            if name == "original" and ahead is not None:
                found = ahead.result()
            else:
                found = nearest(variant.text, depth)
            for v in found:
                vec_hits.setdefault(int(v.doc[0]), v)
            keys = tuple(str(v.doc[0]) for v in found)
            trust, why = vector_list_trust(
                conn, [int(k) for k in keys], odds, embed_serves, variant.text
            )
            lists.append(
                fusion.RankedList(
                    f"vec:{name}", weight, keys, tuple(v.score for v in found), trust, why
                )
            )
    return lists, bm25_hits, vec_hits


def settled(lists: list[fusion.RankedList]) -> list[fusion.RankedList]:
    """The lists' trusts as fusion uses them: with no vector list to lean on instead, a weak
    keyword list is still the only ranking; with no list trusted at all, all count alike."""
    if not any(lst.keys for lst in lists if lst.name.startswith("vec:")):
        why = "no vector list to weigh it against"
        return [lst if lst.trust == 1.0 else replace(lst, trust=1.0, why=why) for lst in lists]
    if lists and all(lst.trust == 0.0 for lst in lists):
        why = "; no list can be trusted, so all count alike"
        return [replace(lst, trust=1.0, why=lst.why + why) for lst in lists]
    return lists


def _fused(
    lists: list[fusion.RankedList],
    bm25_hits: dict[int, FtsHit],
    vec_hits: dict[int, vector_search.VectorHit],
) -> list[Candidate]:
    """The lists fused by RRF into candidates, each with its per-list numbers."""
    fused = fusion.rrf(lists)
    # the best any document could get were every keyword list trusted: one the query's words
    # barely reached (a typo, another language) lowers every score instead of handing its
    # share to the other lists, so a lone weak hit is not 1.0; a vector list from a model that
    # cannot read the query's language counts as missing, as it would with no model at all
    top = fusion.max_rrf(
        [lst if lst.name.startswith("vec:") else replace(lst, trust=1.0) for lst in lists]
    )
    scores = {lst.name: dict(zip(lst.keys, lst.scores, strict=True)) for lst in lists}
    return [
        Candidate(
            int(f.key),
            f,
            rank,
            min(1.0, f.score / top),
            final=min(1.0, f.score / top),
            bm25=bm25_hits.get(int(f.key)),
            vector=vec_hits.get(int(f.key)),
            list_scores={n: s[f.key] for n, s in scores.items() if f.key in s},
        )
        for rank, f in enumerate(fused, 1)
    ]


def _rerank_stage(
    conn: Any,
    q: ParsedQuery,
    candidates: list[Candidate],
    candidate_limit: int,
    rerank: Rerank | None,
    stages: dict[str, str],
    notices: list[str],
) -> list[Candidate]:
    """The candidates reranked when a reranker is there and works, else in fused order."""
    if rerank is None:
        stages["rerank"] = "off (no reranker model)"
    elif candidates:
        try:
            candidates = _rerank(conn, q, candidates, candidate_limit, rerank)
            stages["rerank"] = f"ran (top {min(candidate_limit, len(candidates))})"
        except UnavailableError as exc:
            stages["rerank"] = "failed (fused order kept)"
            notices.append(f"no reranking: {exc.message}")
    return candidates


def keyword_list_trust(
    conn: Any, kw: bm25.Ranking, odds: dict[str, float], serves: frozenset[str] | None
) -> tuple[float, str]:
    """A keyword list's trust (`fusion.keyword_trust` × `fusion.language_trust`) and why."""
    trust = fusion.keyword_trust(kw.seen)
    why = f"the notes hold {kw.seen:.0%} of the query's words (weighted by rarity)"
    if odds and fusion.languages_matter(serves):
        top = [h.id for h in kw.hits[: fusion.LANGUAGE_TOP]]
        known = documents.languages_of(conn, top)
        bridged = fusion.language_trust(odds, [known.get(i) for i in top], serves)
        if bridged < 1.0:
            trust *= bridged
            why += (
                f"; {1.0 - bridged:.0%} of its first hits are in a language the query is surely "
                "not in, which the vector list matches across"
            )
    return trust, why


def vector_list_trust(
    conn: Any, doc_ids: list[int], odds: dict[str, float], serves: frozenset[str] | None, text: str
) -> tuple[float, str]:
    """A vector list's trust (`fusion.vector_trust`, from its first hits' recorded languages
    and the script of its query `text`) and why."""
    if serves is None:
        return 1.0, "the embedding model's languages are not known"
    if serves == language.EVERY:
        return 1.0, "the embedding model serves every language"
    if not odds:
        return 1.0, "the query has no letters to tell its language by"
    top = doc_ids[: fusion.LANGUAGE_TOP]
    recorded = documents.languages_of(conn, top)
    hit_languages = [recorded.get(i) for i in top]
    script = language.principal_script(text)
    shared = script is not None and script in {language.script_of(lang) for lang in serves}
    floor = fusion.SHARED_SCRIPT if shared else 0.0
    trust = fusion.vector_trust(odds, hit_languages, serves, floor)
    names = "/".join(sorted(serves))
    served = sum(p for lang, p in odds.items() if lang in serves)
    if served < fusion.SURELY_UNSERVED:
        return trust, (
            f"the query is surely not in {names}, all the embedding model reads"
            + (f", though in its script ({script})" if shared else "")
        )
    if served >= fusion.SERVED_CONFIDENT:
        return trust, f"the query is likely in {names}, which the embedding model reads"
    known = [lang for lang in hit_languages if lang and lang != language.UNDETERMINED]
    read = sum(1 for lang in known if lang in serves)
    return trust, (
        f"the query's language is unsure; {read} of its first {len(known)} hits with a known "
        f"language are in {names}, all the embedding model reads"
    )


def above_floor(c: Candidate, min_similarity: float) -> bool:
    """A keyword hit, or a passage at least `min_similarity` similar to the query."""
    return c.bm25 is not None or (c.vector is not None and c.vector.score >= min_similarity)


def _rerank(
    conn: Any, q: ParsedQuery, candidates: list[Candidate], candidate_limit: int, rerank: Rerank
) -> list[Candidate]:
    head, tail = candidates[:candidate_limit], candidates[candidate_limit:]
    texts = [passage_for(conn, c, q) for c in head]
    scores = rerank(q.text, texts)
    blended = [
        replace(c, rerank=s, final=fusion.blend(c.retrieval, s, c.rrf_rank))
        for c, s in zip(head, scores, strict=True)
    ]
    blended.sort(key=lambda c: (-c.final, c.fused.key))
    floor = min((c.final for c in blended), default=0.0)
    return blended + [replace(c, final=min(c.final, floor)) for c in tail]


def passage_for(conn: Any, c: Candidate, q: ParsedQuery) -> str:
    """The text a reranker judges: the title and the document's best passage."""
    doc_hash = c.vector.doc[4] if c.vector is not None else c.bm25.hash if c.bm25 else ""
    title = c.vector.doc[3] if c.vector is not None else c.bm25.title if c.bm25 else ""
    text = content_text(conn, doc_hash) or ""
    if c.vector is not None:
        best = c.vector.chunks[0][0]
        return f"{title}\n{text[best.start : best.end]}"[:RERANK_TEXT_CHARS]
    chunks = vectors.chunks_of(conn, doc_hash)
    if chunks:
        best = passages.by_keywords(text, chunks, (*q.terms, *q.prefixes, *q.phrases))[0][0]
        return f"{title}\n{text[best.start : best.end]}"[:RERANK_TEXT_CHARS]
    body_start = body_offset(text, c.bm25.body_line if c.bm25 else 1)
    return f"{title}\n{text[body_start:]}"[:RERANK_TEXT_CHARS]


def explain(c: Candidate) -> dict[str, Any]:
    """Per-stage numbers for one result (the --explain output)."""
    return {
        "lists": {
            name: {"rank": c.fused.ranks[name], "score": round(c.list_scores[name], 4)}
            for name in sorted(c.fused.ranks)
        },
        "rrf": round(c.fused.rrf, 6),
        "bonus": c.fused.bonus,
        "retrieval": round(c.retrieval, 4),
        "rerank": None if c.rerank is None else round(c.rerank, 4),
        "rrfRank": c.rrf_rank,
        "retrievalWeight": fusion.retrieval_weight(c.rrf_rank) if c.rerank is not None else None,
        "final": round(c.final, 4),
    }
