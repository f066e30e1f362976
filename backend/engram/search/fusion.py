"""The math of hybrid retrieval, as pure functions: fusion, bonus, blending, the skip rule.

Reciprocal Rank Fusion (Cormack et al. 2009): a document's score is the sum over ranked lists
of weight / (k + rank). Lists are not comparable by score (BM25 vs cosine), only by rank, which
is why RRF works without calibration. A small bonus rewards documents that some list put at the
very top (RRF alone flattens a confident #1). After reranking, the reranker's score is blended
with the retrieval score, trusting retrieval more at the top of the list where it is usually
right, and the reranker more further down where it adds the most.

A list can also carry a trust below 1, scaling both its weight and its top-rank bonus: a keyword
list built from a small share of the query's words (a question in English over notes in German
or Chinese matches only names and numbers) would otherwise push its noise over a good vector
list, and its #1 would take the bonus outright. So would a keyword list whose hits are notes in
another language than the query's when the embedder serves both: its vector list matches across
the languages, the keywords only on the names and numbers the two share. And a vector list
counts for little when the embedder does not read the query or the notes it ranks (an
English-only model on a German or Chinese vault): it ranks them by the names and numbers it can
read, and fused with a good keyword list it pulls `query` below `search`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engram.models.language import EVERY, UNDETERMINED

RRF_K = 60
CANDIDATE_LIMIT = 30  # fused results the reranker sees
BONUS_FIRST = 0.05
BONUS_TOP3 = 0.02
# (last rank of the band, retrieval weight); the reranker gets 1 - weight
BLEND_BANDS = ((3, 0.75), (10, 0.60))
BLEND_REST = 0.40
# A keyword list is trusted fully when the index holds at least SEEN_TRUSTED of its query's
# words (IDF-weighted), not at all at SEEN_UNTRUSTED or below, linearly between. Tuned on
# SciFact's 809 train queries and the cross-lingual sets xling-de / xling-zh with both
# embedders (docs/benchmarks.md): SciFact queries hold a median 100% of their words and nine
# in ten at least 69%, cross-lingual ones a median 63%. Higher thresholds help the
# cross-lingual sets further but cost SciFact queries whose rare words no note holds.
SEEN_UNTRUSTED = 0.4
SEEN_TRUSTED = 0.8
LANGUAGE_TOP = 10  # keyword hits whose languages judge the list
# A query is surely not in a language the identifier gives it less than this chance of (short
# queries are often not told confidently, but what they are not is): SciFact's 1,109 English
# queries all get English at least 0.01; the 173 English cross-lingual ones get German at most
# 0.0052 and Chinese at most 0.00002.
FOREIGN_ODDS = 0.01
# A vector list is trusted for the query when the identifier gives the embedder's languages at
# least SERVED_CONFIDENT of it (fully) or SERVED_DOUBTFUL (not at all), linearly between; below
# that, by the share of its first hits in languages the embedder serves. A query the identifier
# gives the embedder's languages less than SURELY_UNSERVED of is not read at all: single English
# words get English at least 0.0055 ("android", "sync"), German two-word queries under 0.001.
SERVED_CONFIDENT = 0.5
SERVED_DOUBTFUL = 0.1
SURELY_UNSERVED = 0.001
# A query in another language but in the script of the embedder's own (German for an English
# model) still shares word pieces, names and numbers with it: its vector list keeps this trust,
# at which it can reorder the keyword list below its first hit but never take that place (the
# keyword #1's bonus outweighs anything the list adds). On the Obsidian Help German set with
# all-MiniLM-L6-v2: 0 -> 0.6448 (= search), 0.5 -> 0.6796, 1 -> 0.7022; on the German
# QA set full trust cost 0.062 below search. A script the embedder has no word pieces for
# (Cyrillic, Han for an English model) gets none.
SHARED_SCRIPT = 0.5


@dataclass(frozen=True)
class RankedList:
    """One retrieval list: a name for --explain, its weight, doc keys best first, raw scores,
    how far this query's list can be trusted (0..1, scales its weight and bonus) and why."""

    name: str
    weight: float
    keys: tuple[str, ...]
    scores: tuple[float, ...] = ()
    trust: float = 1.0
    why: str = ""  # the trust's reason, in words (--explain)


@dataclass(frozen=True)
class Fused:
    """A fused document: its RRF sum, bonus, and where each list ranked it (1-based)."""

    key: str
    rrf: float
    bonus: float
    ranks: Mapping[str, int]

    @property
    def score(self) -> float:
        """RRF plus bonus: what candidates are ordered by."""
        return self.rrf + self.bonus


def rrf(lists: Sequence[RankedList], k: int = RRF_K) -> list[Fused]:
    """Fuse ranked lists; best first, ties broken by key for determinism."""
    sums: dict[str, float] = {}
    bonus: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for lst in lists:
        for key, rank in zip(lst.keys, list_ranks(lst), strict=True):
            sums[key] = sums.get(key, 0.0) + lst.trust * lst.weight / (k + rank)
            bonus[key] = max(bonus.get(key, 0.0), lst.trust * top_rank_bonus((rank,)))
            ranks.setdefault(key, {})[lst.name] = rank
    fused = [Fused(key, sums[key], bonus[key], ranks[key]) for key in sums]
    fused.sort(key=lambda f: (-f.score, f.key))
    return fused


def list_ranks(lst: RankedList) -> list[int]:
    """1-based ranks; documents with exactly the same score share the better rank (identical
    notes must not be told apart by the order a list happened to return them in)."""
    if len(lst.scores) != len(lst.keys):
        return list(range(1, len(lst.keys) + 1))
    out: list[int] = []
    for i, score in enumerate(lst.scores):
        out.append(out[-1] if i and score == lst.scores[i - 1] else i + 1)
    return out


def top_rank_bonus(ranks: Iterable[int]) -> float:
    """+0.05 when any list ranked the document first, else +0.02 when any ranked it 2nd-3rd."""
    best = min(ranks, default=0)
    if best <= 0:
        return 0.0
    if best == 1:
        return BONUS_FIRST
    if best <= 3:
        return BONUS_TOP3
    return 0.0


def max_rrf(lists: Sequence[RankedList], k: int = RRF_K) -> float:
    """The largest score fusion can give (first in every list, with the bonus)."""
    return sum(lst.trust * lst.weight / (k + 1) for lst in lists) + BONUS_FIRST


def keyword_trust(seen: float) -> float:
    """How far a keyword list can be trusted, from the share of its query's words the index
    holds (bm25.Ranking.seen)."""
    share = (seen - SEEN_UNTRUSTED) / (SEEN_TRUSTED - SEEN_UNTRUSTED)
    return max(0.0, min(1.0, share))


def languages_matter(serves: frozenset[str] | None) -> bool:
    """Whether `language_trust` can be below 1 with an embedder serving `serves`: only when it
    serves more than one language (an English-only one cannot match across languages)."""
    return serves is not None and (serves == EVERY or len(serves) > 1)


def language_trust(
    odds: Mapping[str, float], hit_languages: Sequence[str | None], serves: frozenset[str] | None
) -> float:
    """How far a keyword list can be trusted, from the languages of its first hits: the share
    of those (whose language is known) not written in a language the query is surely not in
    (`odds`: the identifier's probability of each language for the query) that the embedder
    serves too, so the vector list matches them across the languages instead. `serves`: ISO
    codes, or EVERY. 1 when the embedder's languages are not known or the query is likely in
    a language it does not serve."""
    if serves is None or not odds:
        return 1.0
    if serves != EVERY and sum(p for lang, p in odds.items() if lang in serves) < 0.5:
        return 1.0
    known = [lang for lang in hit_languages[:LANGUAGE_TOP] if lang and lang != UNDETERMINED]
    if not known:
        return 1.0
    bridged = sum(
        1
        for lang in known
        if odds.get(lang, 0.0) < FOREIGN_ODDS and (serves == EVERY or lang in serves)
    )
    return 1.0 - bridged / len(known)


def vector_trust(
    odds: Mapping[str, float],
    hit_languages: Sequence[str | None],
    serves: frozenset[str] | None,
    floor: float = 0.0,
) -> float:
    """How far a vector list can be trusted from the languages the embedder serves (`serves`:
    ISO codes, EVERY, or None when not known: 1): `floor` when the query is surely in a language
    it does not serve (SHARED_SCRIPT when the query is written in the script of the embedder's
    languages, else 0); fully when the query is likely in one it serves (a question in English
    over German notes is still matched across the languages, as well as the keywords match);
    else the share of its first hits (whose language is known) written in a language it serves,
    at least `floor`. 1 without odds (no letters)."""
    if serves is None or serves == EVERY or not odds:
        return 1.0
    served = sum(p for lang, p in odds.items() if lang in serves)
    if served < SURELY_UNSERVED:
        return floor
    confident = (served - SERVED_DOUBTFUL) / (SERVED_CONFIDENT - SERVED_DOUBTFUL)
    known = [lang for lang in hit_languages[:LANGUAGE_TOP] if lang and lang != UNDETERMINED]
    notes = sum(1 for lang in known if lang in serves) / len(known) if known else 1.0
    return max(floor, notes, min(1.0, max(0.0, confident)))


def retrieval_weight(rank: int) -> float:
    """How much the retrieval score counts at a 1-based candidate rank."""
    for last, weight in BLEND_BANDS:
        if rank <= last:
            return weight
    return BLEND_REST


def blend(retrieval: float, rerank: float, rank: int) -> float:
    """Position-aware blend of a 0..1 retrieval score and a 0..1 reranker score."""
    w = retrieval_weight(rank)
    return w * retrieval + (1.0 - w) * rerank


def strong_top_hit(scores: Sequence[float], min_top: float, min_ratio: float) -> bool:
    """True when the best keyword hit is strong and well ahead of the second (skip expansion).

    `scores` are raw BM25 magnitudes (positive, best first): the top must reach `min_top` and
    beat the runner-up by the factor `min_ratio`.
    """
    if not scores or scores[0] < min_top:
        return False
    second = scores[1] if len(scores) > 1 else 0.0
    return scores[0] >= min_ratio * second
