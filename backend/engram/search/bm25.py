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


def search(
    conn: Any, q: ParsedQuery, limit: int | None, with_snippets: bool = True
) -> list[store_search.FtsHit]:
    """Ranked documents for a query (filter-only queries list newest first)."""
    match = match_expression(q)
    if match is None:
        if q.filters.is_empty():
            return []
        return store_search.filtered(conn, q.filters, limit)
    hits = store_search.bm25(conn, match, q.filters, limit)
    if not with_snippets:
        return hits
    marked = store_search.snippets(conn, match, [h.id for h in hits])
    return [replace(h, snippet=marked.get(h.id, "")) for h in hits]
