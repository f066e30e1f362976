"""Snippets: highlights map to the display text; line numbers point into the file."""

from __future__ import annotations

from engram.search.snippets import around, first_lines, from_marked
from engram.store.search import SNIPPET_END as E
from engram.store.search import SNIPPET_START as S

TEXT = "---\na: 1\n---\n# Title\n\nfirst para\nsecond line has the  pricing word\n"


def test_from_marked_line_and_highlight() -> None:
    snip = from_marked(f"…second line has the  {S}pricing{E} word", TEXT, 4)
    assert snip is not None
    assert snip.line == 7
    s, e = snip.highlights[0]
    assert snip.text[s:e] == "pricing"
    assert "  " not in snip.text  # whitespace folded


def test_unmarked_snippet_is_none() -> None:
    assert from_marked("no marks", TEXT, 4) is None


def test_around_and_first_lines() -> None:
    snip = around(TEXT, 4, ["PRICING"])
    assert snip.line == 7 and snip.text[slice(*snip.highlights[0])].lower() == "pricing"
    head = first_lines(TEXT, 4)
    assert head.line == 4 and head.text.startswith("# Title")
    assert around(TEXT, 4, ["absent"]).line == 4
