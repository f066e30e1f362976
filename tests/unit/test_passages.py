"""Keyword ranking of a document's passages (--chunks, the reranker's passage)."""

from __future__ import annotations

import pytest

from engram.search import passages
from engram.store.vectors import ChunkRow

TEXT = "espresso grind\nmilk foam and latte art\nespresso espresso shots\nlatte espresso milk\n"


def chunk(seq: int, start: int, end: int) -> ChunkRow:
    line = TEXT[:start].count("\n") + 1
    return ChunkRow(seq, "h", seq, start, end, line, line, "", f"t{seq}")


CHUNKS = [chunk(0, 0, 15), chunk(1, 15, 39), chunk(2, 39, 63), chunk(3, 63, 83)]


@pytest.mark.parametrize(
    ("needles", "order", "shares"),
    [
        (["espresso", "milk"], [3, 2, 0, 1], [1.0, 0.5, 0.5, 0.5]),  # both words beat more hits
        (["espresso"], [2, 0, 3, 1], [1.0, 1.0, 1.0, 0.0]),  # more hits, then position
        (["ESPRESSO", "espresso", " "], [2, 0, 3, 1], [1.0, 1.0, 1.0, 0.0]),  # case, dupes
        ([], [0, 1, 2, 3], [0.0, 0.0, 0.0, 0.0]),  # no words: document order
        (["tea"], [0, 1, 2, 3], [0.0, 0.0, 0.0, 0.0]),
    ],
)
def test_by_keywords(needles: list[str], order: list[int], shares: list[float]) -> None:
    ranked = passages.by_keywords(TEXT, CHUNKS, needles)
    assert [ch.seq for ch, _ in ranked] == order
    assert [share for _, share in ranked] == shares


def test_build_keeps_lines_scores_and_highlights() -> None:
    ranked = passages.by_keywords(TEXT, CHUNKS, ["latte"])
    built = passages.build(TEXT, ranked, ["latte"], n=2)
    assert len(built) == 2
    first = built[0]
    assert first.line == 2 and first.end_line == 2 and first.score == 1.0
    start, end = first.highlights[0]
    assert first.snippet[start:end].lower() == "latte"


@pytest.mark.parametrize(
    ("span", "needles", "share"),
    [("Latte art", ["latte", "milk"], 0.5), ("", ["x"], 0.0), ("x", [], 0.0)],
)
def test_keyword_share(span: str, needles: list[str], share: float) -> None:
    assert passages.keyword_share(span, needles) == share
