"""The auto-linker: table-driven cases and a property that it only ever adds link syntax."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engram.graph.autolink import AutoLinker, Mention

NOTES = [
    ("People/Ada Lovelace", ["Ada", "Countess of Lovelace"]),
    ("Apple", []),
    ("Apple Pie", []),
    ("New York", []),
    ("New York City", ["NYC"]),
    ("York City Hall", []),
    ("Note 1", []),
    ("北京", []),
    ("東京タワー", []),
    ("Café", []),
    ("C++", []),
]
LINKER = AutoLinker.for_vault(NOTES, entities=["Python", "apple"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # first mention only, case kept as written
        ("Apple and apple.", "[[Apple]] and apple."),
        ("apple first, Apple later", "[[Apple|apple]] first, Apple later"),
        # aliases link to their note with the text as written
        ("Ada wrote it.", "[[People/Ada Lovelace|Ada]] wrote it."),
        ("the countess of lovelace", "the [[People/Ada Lovelace|countess of lovelace]]"),
        # one link per note, whichever name comes first
        ("Ada, Ada Lovelace", "[[People/Ada Lovelace|Ada]], Ada Lovelace"),
        # longest name wins on overlaps, also against an earlier start
        ("Apple Pie is sweet", "[[Apple Pie]] is sweet"),
        ("New York City Hall", "New [[York City Hall]]"),
        ("New York Cityscape", "[[New York]] Cityscape"),
        # word boundaries, unicode-aware
        ("Pineapple Applesauce", "Pineapple Applesauce"),
        ("Note 10 and Note 1.", "Note 10 and [[Note 1]]."),
        ("Cafés Café", "Cafés [[Café]]"),
        ("L'Apple_x Apple_y (Apple)", "L'Apple_x Apple_y ([[Apple]])"),
        ("C++ rocks", "[[C++]] rocks"),
        # CJK needs no spaces around a name
        ("我在北京工作", "我在[[北京]]工作"),
        ("東京タワーへ行く", "[[東京タワー]]へ行く"),
        # code, math, links, URLs, HTML, tags, comments stay verbatim
        ("`Apple` Apple", "`Apple` [[Apple]]"),
        ("``a `Apple` b`` x", "``a `Apple` b`` x"),
        ("$Apple$ and $$Apple Pie$$", "$Apple$ and $$Apple Pie$$"),
        ("[[Apple]] then Apple", "[[Apple]] then Apple"),
        ("[[Other|Apple]] Apple", "[[Other|Apple]] [[Apple]]"),
        ("![[Apple.png]] Apple", "![[Apple.png]] [[Apple]]"),
        ("[Apple](https://apple.com) Apple Pie", "[Apple](https://apple.com) [[Apple Pie]]"),
        ("[Apple Pie](Apple%20Pie.md) Apple Pie", "[Apple Pie](Apple%20Pie.md) Apple Pie"),
        ("[Apple][ref] x", "[Apple][ref] x"),
        (
            "see https://ex.com/Apple and www.apple.com/Apple",
            "see https://ex.com/Apple and www.apple.com/Apple",
        ),
        (
            "<https://x.org/Apple> <ada@apple.com> ada@apple.com",
            "<https://x.org/Apple> <ada@apple.com> ada@apple.com",
        ),
        ('<span title="Apple">Apple</span>', '<span title="Apple">[[Apple]]</span>'),
        ("#Apple #python Apple", "#Apple #python [[Apple]]"),
        ("%%Apple%% Apple <!-- Apple Pie -->", "%%Apple%% [[Apple]] <!-- Apple Pie -->"),
        ("Text ^Apple", "Text ^Apple"),
        ("Footnote[^Apple] here", "Footnote[^Apple] here"),
        # entities link under their own name; a note of the same name wins
        ("python and Python", "[[Python|python]] and Python"),
        # three letters is the default minimum
        ("NYC is big", "[[New York City|NYC]] is big"),
    ],
)
def test_inline_cases(text: str, expected: str) -> None:
    assert LINKER.link(text).text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # frontmatter
        (
            "---\ntitle: Apple\ntags: [Apple]\n---\nApple\n",
            "---\ntitle: Apple\ntags: [Apple]\n---\n[[Apple]]\n",
        ),
        # fenced and indented code
        ("```\nApple\n```\nApple\n", "```\nApple\n```\n[[Apple]]\n"),
        ("~~~~md\nApple\n~~~~\n", "~~~~md\nApple\n~~~~\n"),
        ("para\n\n    Apple code\n\nApple\n", "para\n\n    Apple code\n\n[[Apple]]\n"),
        # math and HTML blocks
        ("$$\nApple\n$$\nApple\n", "$$\nApple\n$$\n[[Apple]]\n"),
        ("<div>\nApple\n</div>\n\nApple\n", "<div>\nApple\n</div>\n\n[[Apple]]\n"),
        # headings are left alone: a link in a heading breaks links to that heading
        ("# Apple\nApple\n", "# Apple\n[[Apple]]\n"),
        ("Apple\n===\nApple\n", "Apple\n===\n[[Apple]]\n"),
        # lists and quotes are prose
        ("- Apple Pie\n> Ada\n", "- [[Apple Pie]]\n> [[People/Ada Lovelace|Ada]]\n"),
        # in a table the alias pipe is escaped, as Obsidian requires
        (
            "| a | b |\n|---|---|\n| Ada | x |\n",
            "| a | b |\n|---|---|\n| [[People/Ada Lovelace\\|Ada]] | x |\n",
        ),
        # a multi-line comment spans paragraphs
        ("%%\nApple\n\nApple\n%%\nApple\n", "%%\nApple\n\nApple\n%%\n[[Apple]]\n"),
        # Windows and old-Mac line breaks count like \n
        ("```\r\nApple\r\n```\r\nApple", "```\r\nApple\r\n```\r\n[[Apple]]"),
        ("| a |\r|---|\r| Ada |\r", "| a |\r|---|\r| [[People/Ada Lovelace\\|Ada]] |\r"),
        # a markdown link elsewhere counts as an existing link
        ("Apple Pie\n\n[x](Apple%20Pie.md)\n", "Apple Pie\n\n[x](Apple%20Pie.md)\n"),
    ],
)
def test_block_cases(text: str, expected: str) -> None:
    assert LINKER.link(text).text == expected


def test_headings_can_be_opted_in() -> None:
    assert LINKER.link("# Apple\n", link_headings=True).text == "# [[Apple]]\n"


def test_no_self_links_including_aliases() -> None:
    result = LINKER.link("Ada Lovelace, or Ada, met Apple.", self_target="People/Ada Lovelace.md")
    assert result.text == "Ada Lovelace, or Ada, met [[Apple]]."


def test_links_report_spans_of_the_input() -> None:
    text = "x Ada y apple"
    result = LINKER.link(text)
    assert [(text[k.start : k.end], k.target, k.kind) for k in result.links] == [
        ("Ada", "People/Ada Lovelace", "alias"),
        ("apple", "Apple", "note"),
    ]


def test_min_length_and_bad_names_are_dropped() -> None:
    linker = AutoLinker(
        [
            Mention("I", "I"),
            Mention("ab", "Ab"),
            Mention("北", "北"),  # one wide character counts as two: still too short
            Mention("a|b", "X"),
            Mention("Fine", "Bad#Target"),
            Mention("Good", "Good"),
        ],
        min_length=3,
    )
    assert len(linker) == 1
    assert linker.link("I ab 北 a|b Fine Good").text == "I ab 北 a|b Fine [[Good]]"
    assert len(AutoLinker([Mention("ab", "Ab")], min_length=2)) == 1


def test_a_name_two_notes_share_is_not_linked() -> None:
    linker = AutoLinker.for_vault(
        [("a/Index", []), ("b/Index", []), ("Home", ["Start"]), ("Go", ["Start"])]
    )
    assert linker.ambiguous == {"Index", "Start"}
    assert linker.link("Index Start Home").text == "Index Start [[Home]]"


def test_kinds_rank_note_over_alias_over_entity() -> None:
    linker = AutoLinker(
        [
            Mention("Mercury", "Mercury (planet)", "alias"),
            Mention("Mercury", "Mercury"),
            Mention("Venus", "Venus"),
            Mention("venus", "Venus (goddess)", "entity"),
        ]
    )
    assert linker.link("Mercury and Venus").text == "[[Mercury]] and [[Venus]]"
    with pytest.raises(ValueError, match="mention kind"):
        Mention("x", "y", "person")


def test_empty_inputs() -> None:
    assert AutoLinker([]).link("Apple").text == "Apple"
    assert LINKER.link("").links == ()


# --- property: only link syntax is ever added ---------------------------------------------------

_WORDS = ["Apple", "apple", "Pie", "Ada", "New", "York", "City", "NYC", "北京", "Café", "x", "1"]
_GLUE = [
    " ",
    "  ",
    "\n",
    "\n\n",
    "\r",
    "\r\n",
    ", ",
    ".",
    "`",
    "$",
    "#",
    "- ",
    "> ",
    "| ",
    "| a |\n|---|\n",
    "```\n",
    "    ",
    "---\n",
    "%%",
    "<b>",
    "http://",
    "~",
    "*",
    "_",
    "(",
    ")",
    "'",
    "é",
    "京",
]
_TEXT = st.lists(st.sampled_from(_WORDS + _GLUE), max_size=40).map("".join)
_STRIP = re.compile(r"\[\[(?:[^\[\]|\\]*\\?\|)?|\]\]")


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_removing_the_inserted_syntax_gives_back_the_input(text: str) -> None:
    result = LINKER.link(text)
    assert _STRIP.sub("", result.text) == text
    assert result.text.count("[[") == len(result.links)
    targets = [k.target.lower() for k in result.links]
    assert len(targets) == len(set(targets))  # one link per note
    for link in result.links:
        assert text[link.start : link.end] == link.text


@settings(max_examples=100, deadline=None)
@given(_TEXT)
@example("Apple(北京北京")  # `](` opens a Markdown destination that holds the `[[北京]]` it made
def test_linking_twice_adds_nothing(text: str) -> None:
    once = LINKER.link(text).text
    assert LINKER.link(once).text == once


HOSTILE = {  # each took 13 to 38 s when a skip pattern scanned to the line's end from each start
    "unclosed wikilinks": " ".join(f"w{i} [[open {i}" for i in range(10_000)),
    "unclosed footnotes": " ".join(f"w{i} [^n{i}" for i in range(10_000)),
    "one long word": "x" * 50_000,
    "a dotted run": "a." * 25_000,
}


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_line_is_read_in_one_pass(body: str) -> None:
    started = time.monotonic()
    result = LINKER.link(f"# Note\n\n{body} Apple\n")
    assert time.monotonic() - started < 10  # 0.03 to 0.25 s here
    assert result.text == f"# Note\n\n{body} [[Apple]]\n"
