"""Pages in a stored text (store/pages.py) and chunks that never cross them."""

from __future__ import annotations

import pytest

from engram.index.chunk_pages import chunk_pages
from engram.models.fake import FakeEmbedder
from engram.store import pages

TEXT = pages.join_pages(["one\ntwo", "", "three\nfour\nfive"])


@pytest.mark.parametrize(
    ("line", "page"), [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (8, 3), (99, 3)]
)
def test_page_of_line(line: int, page: int) -> None:
    assert pages.page_of_line(TEXT, line) == page


def test_spans_and_counts() -> None:
    assert pages.page_count(TEXT) == 3
    start, end, first = pages.page_span(TEXT, 3) or (0, 0, 0)
    assert TEXT[start:end] == "three\nfour\nfive" and first == 6
    start, end, first = pages.page_span(TEXT, 2) or (0, 0, 0)
    assert TEXT[start:end] == "" and first == 4
    assert pages.page_span(TEXT, 4) is None and pages.page_span(TEXT, 0) is None
    assert pages.readable(TEXT).split("\n") == ["one", "two", "", "", "", "three", "four", "five"]
    assert pages.page_at(TEXT, TEXT.index("four")) == 3


def test_form_feeds_inside_a_page_cannot_fake_a_page() -> None:
    assert pages.page_count(pages.join_pages(["a\fb", "c"])) == 2


def test_passages_never_cross_a_page_and_carry_the_outline() -> None:
    body = [" ".join(f"w{p}x{i}." for i in range(300)) for p in range(4)]
    text = pages.join_pages(body)
    outline = [(1, "Part A", 1), (1, "Part B", 5), (2, "B.1", 5), (1, "Part C", 7)]
    fake = FakeEmbedder(max_tokens=64)
    chunks = chunk_pages(text, "Paper", outline, fake.count_tokens, fake.max_text_tokens)
    assert len(chunks) > 8
    for c in chunks:
        assert "\f" not in text[c.start : c.end]
        assert pages.page_at(text, c.start) == pages.page_at(text, c.end - 1)
        assert c.token_count <= fake.max_text_tokens
    by_page = {pages.page_at(text, c.start): c.heading_path for c in chunks}
    assert by_page == {1: ("Part A",), 2: ("Part A",), 3: ("Part B",), 4: ("Part C",)}
    assert text.count("\f") == 3
