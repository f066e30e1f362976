"""A link's context (graph/links.context): its line squeezed and cut around that link, read
only near the link; and the places line_spans gives each link of a line."""

from __future__ import annotations

import re

import pytest

from engram.graph.links import REACH, _cut, context
from engram.vault.spans import line_spans

WORDS = " ".join(f"w{i:03d}" for i in range(200))  # 999 characters, single spaces
LINK = "[[Target]]"


def reference(line: str, at: int | None, width: int) -> str:
    """The cut made the slow way: squeeze the whole line, then cut around the place `at`
    lands on (the definition `context` must keep while reading only near `at`)."""
    mark = "\x00"
    marked = line if at is None else line[:at] + mark + line[at:]
    text = re.sub(r"\s+", " ", marked).strip()
    k = max(0, text.find(mark))
    text = text.replace(mark, "")
    if len(text) <= width:
        return text
    start = max(0, min(k - width // 3, len(text) - width))
    piece = text[start : start + width].strip()
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(text) else "")


def with_link(before: str, after: str) -> tuple[str, int]:
    return before + LINK + after, len(before)


CASES = [
    ("a short line is shown whole", *with_link("  see\t\t", "  now  "), 240),
    ("a link in the middle", *with_link(WORDS, WORDS), 240),
    ("a link near the start", *with_link("w ", WORDS), 60),
    ("a link near the end", *with_link(WORDS, " end"), 60),
    ("runs of white space", *with_link("a \t\n " * 300, "\t b  " * 300), 40),
    ("white space at the ends", *with_link(" " * 500 + WORDS, WORDS + "\t" * 500), 50),
    ("no link: the start", WORDS, None, 50),
    ("a line of one long word", *with_link("x" * 5000, "y" * 5000), 240),
]


@pytest.mark.parametrize(("line", "at", "width"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_context_is_the_whole_line_squeezed_then_cut_around_the_link(
    line: str, at: int | None, width: int
) -> None:
    got = context(line, at, width)
    assert got == reference(line, at, width)
    assert len(got.strip("…")) <= width
    if at is not None and len(line) > 2 * width:
        assert LINK in got  # the link itself is in view, a third of the way in


SINGLE_SPACED = [c for c in CASES if " ".join(c[1].split()) == c[1]]


@pytest.mark.parametrize(
    ("line", "at", "width"), [c[1:] for c in SINGLE_SPACED], ids=[c[0] for c in SINGLE_SPACED]
)
def test_a_single_spaced_line_is_cut_the_same_without_squeezing(
    line: str, at: int | None, width: int
) -> None:
    """A note's line already single-spaced is cut with no squeezing (its windows would not
    change): the cuts are the same."""
    assert _cut(line, at, width, squeezed=True) == reference(line, at, width)


def test_each_of_many_links_on_a_long_line_gets_its_own_cut() -> None:
    line = " ".join(f"{WORDS[:300]} m{i}x [[Hub]]" for i in range(50))
    places = [s.start for s in line_spans(line, 3)]
    assert len(places) == 50 and all(line[p - 2 : p + 5] == "[[Hub]]" for p in places)
    for i, at in enumerate(places):
        got = context(line, at)
        assert f"m{i}x [[Hub]]" in got
        assert got.startswith("…") and got.endswith("…") == (i < 49)


def test_white_space_beyond_the_reach_is_cut_and_says_so() -> None:
    """Only REACH widths each side are read: a longer run of spaces is cut, never scanned."""
    gap = " " * (REACH * 30 + 10)
    assert context("a" + gap + LINK + gap + "b", 1 + len(gap), 30) == f"…{LINK}…"


def test_line_spans_give_each_link_its_place_in_text_order() -> None:
    line = "`[[Code]]` [x](Doc%20One.md) ![[Pic.png]] [[A#h|shown]] [[A#h|shown]]"
    got = [
        (s.link.kind, s.link.target, s.link.embed, s.start, s.link.line)
        for s in line_spans(line, 7)
    ]
    second = line.rindex("A#h")
    assert got == [  # the link in a code span is no link
        ("markdown", "Doc One.md", False, line.index("Doc%20"), 7),
        ("wikilink", "Pic.png", True, line.index("Pic.png"), 7),
        ("wikilink", "A", False, line.index("A#h"), 7),
        ("wikilink", "A", False, second, 7),
    ]
