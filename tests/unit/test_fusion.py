"""Fusion, bonus, blending and the expansion skip rule, table-driven."""

from __future__ import annotations

import pytest

from engram.search.fusion import (
    RankedList,
    blend,
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
