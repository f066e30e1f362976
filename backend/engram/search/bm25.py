"""BM25 retrieval: a parsed query becomes a safe FTS5 expression."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engram.search.query import ParsedQuery
from engram.store import search as store_search
from engram.store.fts import bigrams, quote

TEXT_COLUMNS = "{title headings props body}"


def match_expression(q: ParsedQuery) -> str | None:
    """The FTS5 MATCH string for a query, or None when it has nothing to match.

    Every piece of user text is a quoted FTS5 string, so no input is a syntax error.
    """
    positives = [quote(t) for t in q.terms]
    positives += [quote(p) + "*" for p in q.prefixes]
    positives += [quote(p) for p in q.phrases]
    alternatives = []
    if positives:
        alternatives.append(f"{TEXT_COLUMNS} : ({' OR '.join(positives)})")
    grams: list[str] = []
    for run in q.cjk:
        grams += [quote(g) + ("*" if len(run) == 1 else "") for g in bigrams(run)]
    if grams:
        alternatives.append(f"cjk : ({' OR '.join(dict.fromkeys(grams))})")
    if not alternatives:
        return None
    expr = " OR ".join(f"({a})" for a in alternatives)
    if q.phrases:
        required = " AND ".join(f"{TEXT_COLUMNS} : {quote(p)}" for p in q.phrases)
        expr = f"{required} AND ({expr})"
    if q.excluded:
        expr = f"({expr}) NOT {TEXT_COLUMNS} : ({' OR '.join(quote(e) for e in q.excluded)})"
    return expr


def normalize(bm25: float) -> float:
    """Map FTS5's rank (more negative is better) into 0..1, order preserved."""
    x = max(0.0, -bm25)
    return x / (1.0 + x)


# On large indexes, OR-ed words found in more than this share of documents are left out of the
# match: they add little to BM25 (an IDF of at most log 3, against 6-8 for the words that
# decide the ranking; FTS5 gives no weight at all past one half) but make every common
# document a candidate to score, and scoring candidates is most of a search's time. On BEIR
# SciFact a quarter ranks a third fewer documents than keeping every word, with nDCG@10 as good
# or better on both the test and the train queries (docs/benchmarks.md). Small indexes keep
# every word.
COMMON_SHARE = 1 / 4
PRUNE_MIN_DOCS = 1_000


def prune_common_terms(conn: Any, q: ParsedQuery) -> ParsedQuery:
    """The query without words too common to help ranking (the rarest is always kept)."""
    if len(q.terms) < 2:
        return q
    total, found = store_search.term_document_counts(
        conn, [f"{TEXT_COLUMNS} : {quote(t)}" for t in q.terms]
    )
    if total < PRUNE_MIN_DOCS:
        return q
    counts = dict(zip(q.terms, found, strict=True))
    keep = tuple(t for t in q.terms if counts[t] <= COMMON_SHARE * total)
    if not keep and not (q.phrases or q.prefixes or q.cjk):
        keep = (min(q.terms, key=lambda t: counts[t]),)
    return replace(q, terms=keep)


def search(
    conn: Any, q: ParsedQuery, limit: int | None, with_snippets: bool = True
) -> list[store_search.FtsHit]:
    """Ranked documents for a query (filter-only queries list newest first)."""
    match = match_expression(prune_common_terms(conn, q))
    if match is None:
        if q.filters.is_empty():
            return []
        return store_search.filtered(conn, q.filters, limit)
    hits = store_search.bm25(conn, match, q.filters, limit)
    if not with_snippets:
        return hits
    marked = store_search.snippets(conn, match, [h.id for h in hits])
    return [replace(h, snippet=marked.get(h.id, "")) for h in hits]
