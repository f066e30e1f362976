"""Fusion, bonus, blending and the expansion skip rule, table-driven."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.models.language import EVERY
from engram.search.evaluate import ndcg_at
from engram.search.fusion import (
    FOREIGN_ODDS,
    LANGUAGE_TOP,
    SEEN_UNTRUSTED,
    SHARED_SCRIPT,
    RankedList,
    blend,
    keyword_trust,
    language_trust,
    languages_matter,
    max_rrf,
    retrieval_weight,
    rrf,
    strong_top_hit,
    top_rank_bonus,
    vector_trust,
)


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = rrf([RankedList("bm25", 2.0, ("a", "b", "c")), RankedList("vec", 1.0, ("b", "d"))])
    got = {f.key: (round(f.rrf, 6), f.bonus, dict(f.ranks)) for f in fused}
    assert got == {
        "a": (round(2 / 61, 6), 0.05, {"bm25": 1}),
        "b": (round(2 / 62 + 1 / 61, 6), 0.05, {"bm25": 2, "vec": 1}),
        "c": (round(2 / 63, 6), 0.02, {"bm25": 3}),
        "d": (round(1 / 62, 6), 0.02, {"vec": 2}),
    }
    assert [f.key for f in fused] == ["b", "a", "c", "d"]


def test_rrf_ties_break_by_key_and_k_changes_scores() -> None:
    fused = rrf([RankedList("x", 1.0, ("z",)), RankedList("y", 1.0, ("a",))])
    assert [f.key for f in fused] == ["a", "z"]
    assert rrf([RankedList("x", 1.0, ("a",))], k=0)[0].rrf == 1.0


@pytest.mark.parametrize(
    ("ranks", "bonus"),
    [
        ([1], 0.05),
        ([5, 1], 0.05),
        ([2], 0.02),
        ([3, 9], 0.02),
        ([4], 0.0),
        ([], 0.0),
    ],
)
def test_top_rank_bonus(ranks: list[int], bonus: float) -> None:
    assert top_rank_bonus(ranks) == bonus


def test_max_rrf_bounds_every_fused_score() -> None:
    lists = [RankedList("a", 2.0, ("x", "y")), RankedList("b", 1.0, ("x", "z"))]
    assert max(f.score for f in rrf(lists)) == pytest.approx(max_rrf(lists))


@pytest.mark.parametrize(
    ("rank", "weight"),
    [
        (1, 0.75),
        (3, 0.75),
        (4, 0.60),
        (10, 0.60),
        (11, 0.40),
        (30, 0.40),
    ],
)
def test_position_aware_weights(rank: int, weight: float) -> None:
    assert retrieval_weight(rank) == weight


@pytest.mark.parametrize(
    ("retrieval", "rerank", "rank", "final"),
    [
        (1.0, 0.0, 1, 0.75),
        (0.0, 1.0, 1, 0.25),
        (0.5, 1.0, 5, 0.7),
        (0.2, 0.9, 20, 0.62),
    ],
)
def test_blend(retrieval: float, rerank: float, rank: int, final: float) -> None:
    assert blend(retrieval, rerank, rank) == pytest.approx(final)


@pytest.mark.parametrize(
    ("scores", "skip"),
    [
        ([30.0, 10.0], True),
        ([30.0, 25.0], False),
        ([10.0, 1.0], False),
        ([30.0], True),
        ([], False),
        ([18.0, 12.0], True),
        ([17.9, 1.0], False),
    ],
)
def test_strong_top_hit(scores: list[float], skip: bool) -> None:
    assert strong_top_hit(scores, 18.0, 1.5) is skip


def test_tied_scores_share_a_rank() -> None:
    lst = RankedList("bm25", 1.0, ("a", "b", "c", "d"), (9.0, 9.0, 5.0, 5.0))
    fused = {f.key: f for f in rrf([lst])}
    assert fused["a"].score == fused["b"].score
    assert dict(fused["b"].ranks) == {"bm25": 1} and dict(fused["d"].ranks) == {"bm25": 3}
    assert fused["c"].bonus == fused["d"].bonus == 0.02


@pytest.mark.parametrize(
    ("seen", "trust"), [(0.0, 0.0), (0.4, 0.0), (0.6, 0.5), (0.8, 1.0), (1.0, 1.0)]
)
def test_keyword_trust_rises_with_the_share_of_query_words_the_index_holds(
    seen: float, trust: float
) -> None:
    assert keyword_trust(seen) == pytest.approx(trust)


def _ndcg(keys: list[str], relevant: set[str]) -> float:
    return ndcg_at(keys, dict.fromkeys(relevant, 1), 10)


@settings(max_examples=200, deadline=None)
@given(
    good=st.permutations([f"d{i}" for i in range(30)]),
    noise=st.lists(st.sampled_from([f"d{i}" for i in range(40)]), unique=True, max_size=30),
    relevant=st.sets(st.sampled_from([f"d{i}" for i in range(40)]), min_size=1, max_size=5),
    seen=st.floats(0.0, SEEN_UNTRUSTED),
)
def test_an_untrusted_keyword_list_never_costs_the_vector_list_anything(
    good: list[str], noise: list[str], relevant: set[str], seen: float
) -> None:
    """Whatever a keyword list from a query the index barely knows ranks, the fused list scores
    exactly as well as the vector list alone (the xling failure: its #1 took the bonus)."""
    lists = [
        RankedList("bm25", 2.0, tuple(noise), trust=keyword_trust(seen)),
        RankedList("vec", 2.0, tuple(good)),
    ]
    fused = [f.key for f in rrf(lists)]
    assert _ndcg(fused, relevant) == _ndcg(good, relevant)
    assert fused[: len(good)] == good


@settings(max_examples=200, deadline=None)
@given(
    docs=st.permutations([f"d{i}" for i in range(20)]),
    trust=st.floats(0.0, 1.0),
)
def test_a_list_trusted_less_never_gains_places(docs: list[str], trust: float) -> None:
    """Lowering a list's trust never lifts its first document (last in the other list)."""
    other = tuple(reversed(docs))
    full = [f.key for f in rrf([RankedList("a", 2.0, tuple(docs)), RankedList("b", 2.0, other)])]
    less = [
        f.key
        for f in rrf([RankedList("a", 2.0, tuple(docs), trust=trust), RankedList("b", 2.0, other)])
    ]
    top_a = docs[0]
    assert less.index(top_a) >= full.index(top_a)


LANGS = ["en", "de", "zh", "fr", "ru", "und", None]
odds_of = st.dictionaries(
    st.sampled_from(["en", "de", "zh", "fr", "ru"]), st.floats(0.0, 1.0), max_size=5
)
hits_of = st.lists(st.sampled_from(LANGS), max_size=2 * LANGUAGE_TOP)
serves_of = st.one_of(
    st.none(), st.just(EVERY), st.sets(st.sampled_from(["en", "de", "zh"])).map(frozenset)
)


def _surely_not(odds: dict[str, float], lang: str | None) -> bool:
    return lang not in (None, "und") and odds.get(lang, 0.0) < FOREIGN_ODDS


@settings(max_examples=300, deadline=None)
@given(odds=odds_of, hits=hits_of, serves=serves_of)
def test_language_trust_is_the_share_of_hits_a_vector_list_cannot_bridge(
    odds: dict[str, float], hits: list[str | None], serves: frozenset[str] | None
) -> None:
    """Trust is in [0, 1]; only hits in a language the query is surely not in, served by the
    embedder, lower it; an embedder of unknown languages or no language odds change nothing."""
    trust = language_trust(odds, hits, serves)
    assert 0.0 <= trust <= 1.0
    top = hits[:LANGUAGE_TOP]
    if not languages_matter(serves) or not odds or not any(_surely_not(odds, h) for h in top):
        assert trust == 1.0
    if serves == EVERY and odds:
        known = [h for h in top if h not in (None, "und")]
        foreign = sum(_surely_not(odds, h) for h in known)
        assert trust == pytest.approx(1.0 - foreign / len(known) if known else 1.0)


@settings(max_examples=300, deadline=None)
@given(odds=odds_of, hits=hits_of, serves=serves_of, at=st.integers(0, 2 * LANGUAGE_TOP))
def test_a_hit_in_the_querys_language_never_lowers_trust(
    odds: dict[str, float], hits: list[str | None], serves: frozenset[str] | None, at: int
) -> None:
    """Turning one of the hits into a note in the query's likeliest language never lowers
    the list's trust, nor does an embedder serving fewer languages."""
    if not odds:
        return
    likeliest = max(odds, key=lambda k: odds[k])
    changed = list(hits)
    changed[at : at + 1] = [likeliest]
    assert language_trust(odds, changed, serves) >= language_trust(odds, hits, serves) or (
        odds[likeliest] < FOREIGN_ODDS
    )
    assert language_trust(odds, hits, serves) >= language_trust(odds, hits, EVERY)


@settings(max_examples=200, deadline=None)
@given(
    good=st.permutations([f"d{i}" for i in range(30)]),
    noise=st.lists(st.sampled_from([f"d{i}" for i in range(40)]), unique=True, max_size=30),
    relevant=st.sets(st.sampled_from([f"d{i}" for i in range(40)]), min_size=1, max_size=5),
    foreign=st.sampled_from(["de", "zh"]),
)
def test_keywords_only_in_notes_of_another_language_never_cost_a_multilingual_vector_list(
    good: list[str], noise: list[str], relevant: set[str], foreign: str
) -> None:
    """An English question whose keyword hits are all German (or Chinese) notes, with an
    embedder serving both: the fused list scores as well as the vector list alone."""
    odds = {"en": 0.95, "nl": 0.04, foreign: 0.001}
    trust = language_trust(odds, [foreign] * len(noise), EVERY) if noise else 1.0
    lists = [
        RankedList("bm25", 2.0, tuple(noise), trust=trust),
        RankedList("vec", 2.0, tuple(good)),
    ]
    fused = [f.key for f in rrf(lists)]
    assert _ndcg(fused, relevant) == _ndcg(good, relevant)
    assert fused[: len(good)] == good


GERMAN = {"de": 0.97, "lb": 0.02, "en": 1e-7}
RUSSIAN = {"ru": 0.99, "uk": 0.01, "en": 1e-30}
ENGLISH = {"en": 0.9, "nl": 0.05, "de": 0.001}
UNSURE = {"nl": 0.06, "en": 0.005, "de": 0.004}  # one word ("Canvas")
ENGLISH_ONLY = frozenset({"en"})


@pytest.mark.parametrize(
    ("odds", "hits", "serves", "trust"),
    [
        (GERMAN, ["de"] * 10, None, 1.0),  # an embedder whose languages are not known
        (GERMAN, ["de"] * 10, EVERY, 1.0),  # a multilingual one reads everything
        ({}, ["de"] * 10, ENGLISH_ONLY, 1.0),  # a query without letters
        (ENGLISH, ["en"] * 10, ENGLISH_ONLY, 1.0),  # English over English notes
        (ENGLISH, ["de"] * 10, ENGLISH_ONLY, 1.0),  # English over German: matched across
        (GERMAN, ["de"] * 10, ENGLISH_ONLY, 0.0),  # German over German, English-only model
        (GERMAN, ["en"] * 10, ENGLISH_ONLY, 0.0),  # the model cannot read the query
        (UNSURE, ["en"] * 10, ENGLISH_ONLY, 1.0),  # a short query over English notes
        (UNSURE, ["de"] * 10, ENGLISH_ONLY, 0.0),  # ... over German notes
        (UNSURE, ["de", "en", "und", None] * 2, ENGLISH_ONLY, 0.5),
        (UNSURE, ["und", None], ENGLISH_ONLY, 1.0),  # no hit whose language is known
        ({"en": 0.3, "de": 0.01}, ["de"] * 10, ENGLISH_ONLY, 0.5),  # between doubtful and sure
    ],
)
def test_vector_trust(
    odds: dict[str, float], hits: list[str | None], serves: frozenset[str] | None, trust: float
) -> None:
    assert vector_trust(odds, hits, serves) == pytest.approx(trust, abs=1e-3)
    # a query in the script of the embedder's languages keeps at least the floor
    floored = vector_trust(odds, hits, serves, SHARED_SCRIPT)
    assert floored == pytest.approx(max(trust, SHARED_SCRIPT), abs=1e-3)


@settings(max_examples=300, deadline=None)
@given(
    kw=st.permutations([f"d{i}" for i in range(30)]),
    vec=st.permutations([f"d{i}" for i in range(40)]),
    cut=st.integers(0, 40),
)
def test_a_vector_list_at_the_shared_script_trust_never_takes_the_keyword_first_place(
    kw: list[str], vec: list[str], cut: int
) -> None:
    """German notes and question, English-only model: the vector list may reorder the keyword
    list below its first hit, never take that place (the issue's German set lost 0.062 below
    `search` when it could)."""
    trust = vector_trust(GERMAN, ["de"] * LANGUAGE_TOP, ENGLISH_ONLY, SHARED_SCRIPT)
    lists = [
        RankedList("bm25", 2.0, tuple(kw)),
        RankedList("vec", 2.0, tuple(vec[:cut]), trust=trust),
    ]
    assert rrf(lists)[0].key == kw[0]


@settings(max_examples=300, deadline=None)
@given(odds=odds_of, hits=hits_of, serves=serves_of, at=st.integers(0, 2 * LANGUAGE_TOP))
def test_a_hit_the_embedder_reads_never_lowers_vector_trust(
    odds: dict[str, float], hits: list[str | None], serves: frozenset[str] | None, at: int
) -> None:
    """Vector trust is in [0, 1]; turning a hit into a note in a language the embedder serves
    never lowers it, nor does more of the query's odds on a language it serves."""
    trust = vector_trust(odds, hits, serves)
    assert 0.0 <= trust <= 1.0
    if serves is None or serves == EVERY:
        assert trust == 1.0
    if serves is None or serves == EVERY or not serves:
        return
    changed = list(hits)
    changed[at : at + 1] = [sorted(serves)[0]]
    assert vector_trust(odds, changed, serves) >= trust
    lifted = {**odds, sorted(serves)[0]: odds.get(sorted(serves)[0], 0.0) + 0.5}
    assert vector_trust(lifted, hits, serves) >= trust


# Who can serve a query (ground truth of the generated scenario) -> the trusts the real
# functions give its lists: keyword (seen share, hit languages), vector (hit languages).
SCENARIOS = {
    # Russian or Chinese notes and question, English-only embedder: vectors are noise
    "monolingual, English-only model": ("keywords", 0.95, RUSSIAN, "ru", ENGLISH_ONLY),
    # English question over German notes, multilingual embedder: keywords are noise
    "cross-lingual, multilingual model": ("vectors", 0.6, ENGLISH, "de", EVERY),
    # a question whose words no note holds: keywords are noise
    "unknown words": ("vectors", 0.3, ENGLISH, "en", ENGLISH_ONLY),
}


@settings(max_examples=300, deadline=None)
@given(
    scenario=st.sampled_from(sorted(SCENARIOS)),
    good=st.permutations([f"d{i}" for i in range(30)]),
    noise=st.permutations([f"d{i}" for i in range(40)]),
    relevant=st.sets(st.sampled_from([f"d{i}" for i in range(40)]), min_size=1, max_size=5),
    cut=st.integers(0, 40),
)
def test_hybrid_is_never_worse_than_the_list_that_can_serve_the_query(
    scenario: str, good: list[str], noise: list[str], relevant: set[str], cut: int
) -> None:
    """`query` >= max(`search`, `vsearch`) - 0.01 over generated rankings: when only one list
    can serve the query (the other ranks noise: a model that cannot read the language, words
    no note holds, keywords in the wrong language), the trusts the real functions give leave
    fused nDCG@10 at least that list's, and at least the noise list's when it is the worse."""
    serving, seen, odds, notes, serves = SCENARIOS[scenario]
    noise = noise[:cut]
    hit_langs = [notes] * LANGUAGE_TOP
    kw_trust = keyword_trust(seen) * (
        language_trust(odds, hit_langs, serves) if languages_matter(serves) else 1.0
    )
    vec_trust = vector_trust(odds, hit_langs, serves)
    kw, vec = (good, noise) if serving == "keywords" else (noise, good)
    lists = [
        RankedList("bm25", 2.0, tuple(kw), trust=kw_trust),
        RankedList("vec", 2.0, tuple(vec), trust=vec_trust),
    ]
    fused = _ndcg([f.key for f in rrf(lists)], relevant)
    assert fused >= _ndcg(good, relevant) - 0.01
    if _ndcg(noise, relevant) <= _ndcg(good, relevant):
        assert fused >= max(_ndcg(kw, relevant), _ndcg(vec, relevant)) - 0.01
