"""BM25 retrieval: a parsed query becomes a safe FTS5 expression."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Any

from engram.search import broad
from engram.search.helpers import HELPERS
from engram.search.query import ParsedQuery
from engram.store import search as store_search
from engram.store.fts import bigrams, fold, quote

# Words match every column (`cjk` also holds folded spellings, store/fts.py), so expressions
# carry no column filter: one naming every column changes no match, yet FTS5 then filters each
# position list it reads (ranking a word in all 5,000 load-test notes, 4.2 ms instead of 3.9)
# The full-text index keeps prefix indexes for prefixes of up to this many characters (m015)
INDEXED_PREFIX = 3


def match_expression(q: ParsedQuery, unranked: Collection[str] = ()) -> str | None:
    """The FTS5 MATCH string for a query, or None when it has nothing to match.

    Every piece of user text is a quoted FTS5 string, so no input is a syntax error. Phrases
    in `unranked` are only required: OR-ed among what ranks, FTS5 would match them over the
    whole index.
    """
    positives = [quote(t) for t in q.terms]
    positives += [quote(f) for f in folded(q)]
    positives += [quote(p) + "*" for p in q.prefixes]
    positives += [quote(p) for p in q.phrases if p not in unranked]
    alternatives = []
    if positives:
        alternatives.append(" OR ".join(positives))
    grams: list[str] = []
    for run in q.cjk:
        grams += [quote(g) + ("*" if len(run) == 1 else "") for g in bigrams(run)]
    if grams:
        alternatives.append(f"cjk : ({' OR '.join(dict.fromkeys(grams))})")
    if not alternatives:
        return None
    expr = " OR ".join(f"({a})" for a in alternatives)
    if q.phrases:
        required = " AND ".join(quote(p) for p in q.phrases)
        expr = f"{required} AND ({expr})"
    if q.excluded:
        expr = f"({expr}) NOT ({' OR '.join(quote(e) for e in q.excluded)})"
    return expr


def ranked_phrases(q: ParsedQuery) -> list[str]:
    """The FTS5 expressions of everything a query ranks by, one phrase each: words, prefixes
    and phrases over every column, folded spellings and CJK bigrams over the cjk column."""
    out = [quote(t) for t in q.terms]
    out += [f"cjk : {quote(f)}" for f in folded(q)]
    out += [quote(p) + "*" for p in q.prefixes]
    out += [quote(p) for p in q.phrases]
    for run in q.cjk:
        out += [f"cjk : {quote(g)}" + ("*" if len(run) == 1 else "") for g in bigrams(run)]
    return list(dict.fromkeys(out))


def folded(q: ParsedQuery) -> list[str]:
    """The plain spelling of each query word that has one (كِتَاب, Москва with ё, Łódź)."""
    return [f for f in map(fold, q.terms) if f]


def idf(n_docs: int, n_hit: int) -> float:
    """Lucene's BM25 IDF, ln(1 + (N - n + 0.5) / (n + 0.5)): positive at every collection size.

    The classic form FTS5 uses, ln((N - n + 0.5) / (n + 0.5)), is zero or below (FTS5 then
    gives 1e-6) for a word in half the documents or more: in a small vault most words are,
    and every hit scored 0.00 in an order left to chance.
    """
    n_hit = min(n_hit, n_docs)
    return math.log(1.0 + (n_docs - n_hit + 0.5) / (n_hit + 0.5))


def fts5_idf(n_docs: int, n_hit: int) -> float:
    """The IDF FTS5's bm25() applies to a phrase (sqlite/ext/fts5/fts5_aux.c)."""
    value = math.log((n_docs - n_hit + 0.5) / (n_hit + 0.5))
    return value if value > 0.0 else 1e-6


def normalize(bm25: float) -> float:
    """Map a BM25 score (as FtsHit.bm25: more negative is better) into 0..1, order kept."""
    x = max(0.0, -bm25)
    return x / (1.0 + x)


# On large indexes, OR-ed words found in more than this share of documents are left out of the
# match: they add little to BM25 (an IDF below ln 4, against 6-8 for the words that decide the
# ranking) but make every common document a candidate to score, and scoring candidates is most
# of a search's time. On BEIR SciFact a quarter ranks a third fewer documents than keeping
# every word, with nDCG@10 as good or better on both the test and the train queries
# (docs/benchmarks.md). Small indexes keep every word.
COMMON_SHARE = 1 / 4
PRUNE_MIN_DOCS = 1_000
# A pasted paragraph ranks by its 64 most telling words (repeats x IDF): each word is one more
# FTS5 sub-select, and past that they no longer change the ranking (ArguAna, ~100 distinct
# words a query: nDCG@10 0.4944 with 64 against 0.4946 with all, 0.4830 with 32; p50 75 ms
# against 116 ms).
MAX_TERMS = 64


def prune_common_terms(q: ParsedQuery, total: int, counts: dict[str, int]) -> ParsedQuery:
    """The query without words too common to help ranking (the rarest is always kept), and a
    long query cut to its MAX_TERMS most telling words; `counts` maps each word's ranked
    phrase to its document frequency."""
    if len(q.terms) < 2:
        return q
    found = {t: counts[quote(t)] for t in q.terms}
    keep = q.terms
    if total >= PRUNE_MIN_DOCS:
        keep = tuple(t for t in q.terms if found[t] <= COMMON_SHARE * total)
        if not keep and not (q.phrases or q.prefixes or q.cjk):
            keep = (min(q.terms, key=lambda t: found[t]),)
    if len(keep) > MAX_TERMS:
        weight = {t: q.count(t) * idf(total, found[t]) if found[t] else 0.0 for t in keep}
        top = set(sorted(keep, key=lambda t: -weight[t])[:MAX_TERMS])
        keep = tuple(t for t in keep if t in top)
    return replace(q, terms=keep)


def restriction(q: ParsedQuery, weighted: list[tuple[str, float]], match: str) -> str | None:
    """What a ranked document must also match: the required phrases and exclusions, None
    when ranking alone already asks for exactly that (one "phrase" and nothing else), so
    FTS5 does not match the phrase twice."""
    if q.excluded:
        return match
    if not q.phrases:
        return None
    only = [quote(p) for p in q.phrases]
    return None if [p for p, _ in weighted] == only and len(only) == 1 else match


@dataclass(frozen=True)
class Ranking:
    """Keyword hits and `seen`, the IDF-weighted share of the query's words the index holds at
    all: a query in another language than the notes finds few of its words, and a list built
    from the few it shares (names, numbers) is weak evidence (fusion.keyword_trust)."""

    hits: list[store_search.FtsHit]
    seen: float = 1.0
    notices: tuple[str, ...] = ()  # a broad prefix or phrase bounded (search/broad.py)


# On an index of SPLIT_MIN_DOCS or more, a keyword search whose words are in SPLIT_MIN_HITS
# documents or more ranks each half of the index on its own thread when the caller can open a
# connection there (search/helpers.py): FTS5 scores every document holding a word (95-160 ms
# for a word in all of 100,000 notes). Smaller indexes answer in a few milliseconds, and under
# load a split only adds work (the 5,000-note load test lost a tenth of its throughput)
SPLIT_MIN_DOCS = 20_000
SPLIT_MIN_HITS = 5_000


def ranked(
    conn: Any,
    q: ParsedQuery,
    limit: int | None,
    with_snippets: bool = True,
    connect: Callable[[], Any] | None = None,
) -> Ranking:
    """Ranked documents for a query, with the share of its words the index holds (a query of
    filters alone lists them newest first).

    Scores are BM25 with Lucene's IDF, a word counted as often as the query repeats it (as stock
    BM25 sums over query tokens: a pasted paragraph is about the words it keeps coming back
    to). FTS5 ranks each phrase alone; its own IDF is swapped for Lucene's through a factor per
    phrase computed from the same document counts. `connect` gives the calling thread's own
    connection: with it, a large ranking is split across two threads (SPLIT_MIN_DOCS).
    """
    phrases = ranked_phrases(q)
    if not phrases:
        if q.filters.is_empty():
            return Ranking([])
        return Ranking(store_search.filtered(conn, q.filters, limit))
    total, counts, bound = _counted(conn, q, phrases)
    weights = [idf(total, counts[p]) for p in phrases]
    seen = sum(w for w, p in zip(weights, phrases, strict=True) if counts[p]) / sum(weights)
    pruned = prune_common_terms(bound.narrower(q), total, counts)
    kept = set(ranked_phrases(pruned)) - bound.unranked()
    repeats = {quote(t): pruned.count(t) for t in pruned.terms}
    weighted = [(p, repeats.get(p, 1) * _idf_factor(total, counts[p])) for p in phrases]
    weighted = [(p, f) for p, f in weighted if p in kept and counts[p] > 0]
    span: tuple[int, int] | None = None
    notices: tuple[str, ...] = ()
    if bound and weighted:  # something narrower ranks: broad phrases are only required
        notices = (bound.set_aside(),)
        match = match_expression(pruned, unranked=bound.phrases)
    elif bound:  # only broad prefixes and phrases to rank by: within the newest notes
        pruned = replace(pruned, prefixes=q.prefixes)
        weighted = _windowed(conn, bound, total)
        span = (
            store_search.newest_documents_from(conn, broad.RANK_CAP),
            store_search.last_document_id(conn),
        )
        notices = (bound.windowed(total),)
        match = match_expression(pruned)
    else:
        match = match_expression(pruned)
    if not weighted or match is None:
        return Ranking([], seen)
    restrict = restriction(pruned, weighted, match)
    hits_to_score = span[1] - span[0] if span else sum(counts[p] for p, _ in weighted)
    if connect and limit and total >= SPLIT_MIN_DOCS and hits_to_score >= SPLIT_MIN_HITS:
        hits = _in_halves(conn, connect, weighted, restrict, pruned, limit, span)
    else:
        hits = store_search.bm25(conn, weighted, restrict, pruned.filters, limit, rowids=span)
    if with_snippets:
        marked = snippets(conn, pruned, match, [h.id for h in hits])
        hits = [replace(h, snippet=marked.get(h.id, "")) for h in hits]
    return Ranking(hits, seen, notices)


def _idf_factor(total: int, n_hit: int) -> float:
    """What turns FTS5's IDF of a phrase into Lucene's."""
    return idf(total, n_hit) / fts5_idf(total, n_hit) if n_hit else 0.0


def _counted(
    conn: Any, q: ParsedQuery, phrases: list[str]
) -> tuple[int, dict[str, int], broad.Bounds]:
    """The number of documents, the documents holding each ranked expression, and the broad
    prefixes and phrases. A phrase of several words is counted by its words first (no
    positions read); only one its words leave few notes for is matched over the index, and
    a broad one only until more than BROAD_MIN notes hold it (search/broad.py)."""
    by_words = {quote(p): e for p in q.phrases if (e := broad.word_count_expr(p))}
    plain = [p for p in phrases if p not in by_words]
    total, found = store_search.term_document_counts(conn, plain + list(by_words.values()))
    counts = dict(zip(plain + list(by_words.values()), found, strict=True))
    wide: dict[str, int] = {}
    for p in q.phrases:
        words = by_words.get(quote(p))
        if words is None:
            continue
        if not broad.is_broad(total, counts[words]):
            counts[quote(p)] = store_search.term_document_counts(conn, [quote(p)])[1][0]
            continue
        # matched back from the newest note until more than BROAD_MIN hold it: fewer is the
        # exact count, found in one walk over the phrase's matches
        held = store_search.newest_matches(conn, quote(p), broad.BROAD_MIN + 1)[1]
        counts[quote(p)] = held if held <= broad.BROAD_MIN else counts[words]
        if held > broad.BROAD_MIN:
            wide[p] = counts[words]
    bound = broad.Bounds(broad.broad_prefixes(q, total, counts), wide)
    return total, {p: counts[p] for p in phrases}, bound


def _windowed(conn: Any, bound: broad.Bounds, total: int) -> list[tuple[str, float]]:
    """What broad prefixes and phrases rank by within the newest notes: each prefix, and each
    phrase's words (FTS5 would match the phrase over the whole index again for its IDF)."""
    words = [quote(w) for w in bound.windowed_words()]
    found = dict(zip(words, store_search.term_document_counts(conn, words)[1], strict=True))
    ranked = [(quote(p) + "*", _idf_factor(total, n)) for p, n in bound.prefixes.items()]
    ranked += [(w, _idf_factor(total, n)) for w, n in found.items() if n]
    return [(p, f) for p, f in dict(ranked).items() if f > 0]


def _in_halves(
    conn: Any,
    connect: Callable[[], Any],
    weighted: list[tuple[str, float]],
    restrict: str | None,
    q: ParsedQuery,
    limit: int,
    span: tuple[int, int] | None = None,
) -> list[store_search.FtsHit]:
    """The best `limit` documents, the upper half of the ids (of `span`, by default all)
    ranked on a helper thread: FTS5 takes each phrase's IDF and the mean length from the
    whole index whatever rows it scores, so each score, and the merged order, are those of
    one ranking."""
    first, last = span or (0, store_search.last_document_id(conn))
    middle = (first + last) // 2

    def upper() -> list[store_search.FtsHit]:
        return store_search.bm25(
            connect(), weighted, restrict, q.filters, limit, rowids=(middle + 1, last)
        )

    other = HELPERS.submit(upper)
    lower = store_search.bm25(conn, weighted, restrict, q.filters, limit, rowids=(first, middle))
    return sorted(lower + other.result(), key=lambda h: (h.bm25, h.id))[:limit]


def snippets(conn: Any, q: ParsedQuery, match: str, doc_ids: list[int]) -> dict[int, str]:
    """Marked body fragments of a query's matches in a few documents. FTS5 merges the lists
    of every word a prefix longer than its prefix indexes (m015) covers anew for each document
    looked up by rowid: for such a query one pass over the matches is quicker."""
    long_prefix = any(len(p) > INDEXED_PREFIX for p in q.prefixes)
    return store_search.snippets(conn, match, doc_ids, scan=long_prefix)
