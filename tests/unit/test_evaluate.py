"""Retrieval metrics against hand-computed values (trec_eval conventions)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engram.search.evaluate import (
    evaluate,
    load_qrels,
    load_queries,
    mrr_at,
    ndcg_at,
    percentile,
    ranked,
    recall_at,
    run_lines,
)


def test_ties_break_by_doc_id_descending() -> None:
    assert ranked({"a": 1.0, "c": 1.0, "b": 2.0}) == ["b", "c", "a"]


@pytest.mark.parametrize(
    ("ranking", "judged", "k", "expected"),
    [
        (["a", "b"], {"a": 1}, 10, 1.0),
        (["x", "a"], {"a": 1}, 10, 1 / math.log2(3)),
        (["x", "a"], {"a": 1, "b": 1}, 10, (1 / math.log2(3)) / (1 + 1 / math.log2(3))),
        (["a", "b"], {"a": 1, "b": 2}, 10, (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))),
        (["x"] * 10 + ["a"], {"a": 1}, 10, 0.0),
        ([], {"a": 1}, 10, 0.0),
    ],
)
def test_ndcg(ranking: list[str], judged: dict[str, int], k: int, expected: float) -> None:
    assert ndcg_at(ranking, judged, k) == pytest.approx(expected)


def test_recall_and_mrr() -> None:
    assert recall_at(["a", "x", "b"], {"a": 1, "b": 1, "c": 1}, 2) == pytest.approx(1 / 3)
    assert recall_at(["a", "x", "b"], {"a": 1, "b": 1, "c": 1}, 100) == pytest.approx(2 / 3)
    assert mrr_at(["x", "y", "a"], {"a": 1}, 10) == pytest.approx(1 / 3)
    assert mrr_at(["x"] * 10 + ["a"], {"a": 1}, 10) == 0.0


def test_evaluate_skips_unjudged_queries() -> None:
    out = evaluate({"q1": {"a": 2.0, "b": 1.0}, "q2": {"z": 1.0}}, {"q1": {"a": 1}, "q3": {"a": 0}})
    assert out["queries"] == 1
    assert out["ndcg@10"] == 1.0 and out["mrr@10"] == 1.0


def test_percentile() -> None:
    assert percentile([5, 1, 3, 2, 4], 50) == 3
    assert percentile([1, 2, 3, 4, 100], 95) == 100
    assert percentile([], 50) == 0.0


def test_loaders_tolerate_header_and_crlf(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"_id": "1", "text": "a"}\n\n{"_id": 2, "text": "b"}\n')
    (tmp_path / "qrels.tsv").write_bytes(b"query-id\tcorpus-id\tscore\r\n1\td1\t1\r\n2 0 d2 2\r\n")
    assert load_queries(tmp_path / "q.jsonl") == [("1", "a"), ("2", "b")]
    assert load_qrels(tmp_path / "qrels.tsv") == {"1": {"d1": 1}, "2": {"d2": 2}}


def test_run_file_lines() -> None:
    assert list(run_lines({"q": {"a": 0.5, "b": 0.9}})) == [
        "q Q0 b 1 0.900000 engram",
        "q Q0 a 2 0.500000 engram",
    ]
