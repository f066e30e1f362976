"""The parser on hostile notes: every limit holds, and going over one is a warning, never a
hang, a crash or a lost body. (tests/integration/test_hostile_input.py drives whole vaults.)"""

from __future__ import annotations

import itertools

import pytest

from engram.vault import parse, yamlload
from engram.vault.parse import MAX_ITEMS, parse_note, plain_text


def alias_bomb(levels: int = 16, width: int = 9) -> str:
    """Each level a list of `width` aliases of the one before: width**levels values."""
    names = [chr(ord("a") + i) for i in range(levels)]
    lines = [f"{names[0]}: &{names[0]} [" + ",".join(['"lol"'] * width) + "]"]
    for prev, name in itertools.pairwise(names):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * width) + "]")
    return "---\n" + "\n".join(lines) + "\n---\n# Bomb\n\nthe body stays searchable [[Other]]\n"


def test_an_alias_bomb_is_refused_and_the_body_kept() -> None:
    text = alias_bomb()
    assert len(text.encode()) < 700
    note = parse_note(text, "bomb.md")
    assert note.frontmatter == {}
    assert any("expands to over" in w for w in note.warnings)
    assert "the body stays searchable" in note.body
    assert [lk.target for lk in note.links] == ["Other"]
    assert note.title == "Bomb"


def test_aliases_within_the_limits_still_work() -> None:
    note = parse_note("---\nbase: &b {k: v}\nuse: *b\nlist: [*b, *b]\n---\n", "n.md")
    assert note.frontmatter == {"base": {"k": "v"}, "use": {"k": "v"}, "list": [{"k": "v"}] * 2}
    assert note.warnings == ()


@pytest.mark.parametrize(
    ("fm", "why"),
    [
        ("a: " + "[" * 200_000, "nests deeper"),  # crashed libyaml's composer (C recursion)
        ("a: " + "{b: " * 50 + "1" + "}" * 50, "nests deeper"),
        ("a: &a [*a]", "refers to itself"),
        ("k: " + "x" * (yamlload.MAX_FRONTMATTER_CHARS + 1), "characters, over"),
        ("big: &s " + "y" * 200_000 + "\nmany: [" + ", ".join(["*s"] * 10) + "]", "expands"),
    ],
)
def test_frontmatter_over_a_limit_is_a_warning(fm: str, why: str) -> None:
    note = parse_note(f"---\n{fm}\n---\nbody\n", "n.md")
    assert note.frontmatter == {}
    assert note.body == "body\n"
    assert any(why in w for w in note.warnings), note.warnings


@pytest.mark.parametrize(
    "line",
    [
        "(k::" + " " * 50_000 + "x",  # three quantifiers over the same spaces: cubic
        "(k:: a " * 20_000,  # unclosed inline fields: each scanned to the end of the line
        "k::" + " " * 100_000 + "x",
        " ".join("`" * i for i in range(1, 800)),  # backtick runs with no partner
    ],
)
def test_patterns_stay_linear_on_hostile_lines(line: str) -> None:
    note = parse_note(line, "n.md")  # used to take minutes; a regression hangs this test
    assert note.body == line


def test_inline_fields_and_code_spans_keep_their_meaning() -> None:
    note = parse_note("a [x:: 1] (y::  two ) `[[not]]` ``[[no `pe`]]`` [[yes]]\nk::  v  \n", "n")
    assert [(f.key, f.value) for f in note.fields] == [("x", "1"), ("y", "two"), ("k", "v")]
    assert [lk.target for lk in note.links] == ["yes"]


def test_at_most_max_items_of_each_kind_are_kept() -> None:
    body = " ".join(f"[[n{i}]] #t{i}" for i in range(MAX_ITEMS + 5))
    note = parse_note(body, "n.md")
    assert len(note.links) == MAX_ITEMS and len(note.tags) == MAX_ITEMS
    assert note.links[-1].target == f"n{MAX_ITEMS - 1}"
    assert any("over 10,000 links" in w for w in note.warnings)
    assert any("over 10,000 tags" in w for w in note.warnings)


def test_structure_is_read_from_the_first_lines_and_all_text_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parse, "MAX_STRUCTURE_LINES", 1000)
    text = "x\n" * 1000 + "# Late\n[[late]]\n"
    note = parse_note(text, "n.md")
    assert note.headings == () and note.links == ()
    assert note.body.endswith("[[late]]\n")
    assert any("over 1,000 lines" in w for w in note.warnings)
    assert parse_note(text[4:], "n.md").links[0].target == "late"  # two lines fewer: all read


def test_frontmatter_lines_come_from_the_yaml() -> None:
    text = '---\n"quoted key": 1\nlist:\n  - "[[A]]"\nblock: |\n  one\n  see [[B]]\n---\n'
    note = parse_note(text, "n.md")
    assert [(f.key, f.line) for f in note.fields] == [("quoted key", 2), ("list", 3), ("block", 5)]
    assert [(lk.target, lk.line) for lk in note.links] == [("A", 4), ("B", 7)]


def test_plain_text_keeps_the_body_and_says_why() -> None:
    note = plain_text("---\na: 1\n---\nbody [[x]]\n", "dir/Slow note.md", "too slow")
    assert (note.title, note.body, note.body_line, note.links) == (
        "Slow note",
        "body [[x]]\n",
        4,
        (),
    )
    assert note.warnings == ("indexed as plain text: too slow",)
