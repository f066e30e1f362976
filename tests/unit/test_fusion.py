"""Fusion, bonus, blending and the expansion skip rule, table-driven."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.search.evaluate import ndcg_at
from engram.search.fusion import (
    SEEN_UNTRUSTED,
    RankedList,
    blend,
    keyword_trust,
    max_rrf,
    retrieval_weight,
    rrf,
    strong_top_hit,
    top_rank_bonus,
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
