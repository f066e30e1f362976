"""The note parser: frontmatter, titles, links, tags, fields, blocks, structure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.vault.parse import Link, parse_note, split_frontmatter


def links(text: str) -> list[tuple[str, str, str | None, str | None, str | None, bool]]:
    return [
        (lk.kind, lk.target, lk.heading, lk.block, lk.display, lk.embed)
        for lk in parse_note(text, "n.md").links
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[Note]]", [("wikilink", "Note", None, None, None, False)]),
        ("[[Note|shown]]", [("wikilink", "Note", None, None, "shown", False)]),
        ("[[Note#Head ing]]", [("wikilink", "Note", "Head ing", None, None, False)]),
        ("[[Note#^blk-1]]", [("wikilink", "Note", None, "blk-1", None, False)]),
        ("[[#Local]]", [("wikilink", "", "Local", None, None, False)]),
        ("![[pic.png]]", [("wikilink", "pic.png", None, None, None, True)]),
        ("![[Note#Part|x]]", [("wikilink", "Note", "Part", None, "x", True)]),
        ("[[folder/Note.md]]", [("wikilink", "folder/Note.md", None, None, None, False)]),
        ("[a](Some%20Note.md)", [("markdown", "Some Note.md", None, None, "a", False)]),
        ("[a](<Some Note.md#Sec>)", [("markdown", "Some Note.md", "Sec", None, "a", False)]),
        ("![i](img/x.png)", [("markdown", "img/x.png", None, None, "i", True)]),
        ("[web](https://x.com/a#b) [m](mailto:a@b.c) [anchor](#top)", []),
        ("`[[code]]` and ``[[more `code`]]``", []),
        ("```\n[[fenced]]\n```", []),
        ("    [[indented code]]", []),
        ("$$\n[[math]]\n$$", []),
        (
            "| a | [[T\\|alias]] |\n|---|---|\n| 1 | 2 |",
            [("wikilink", "T", None, None, "alias", False)],
        ),
        ("[[]] [[ ]] [[|x]]", []),
    ],
)
def test_links(text: str, expected: list[tuple[object, ...]]) -> None:
    assert links(text) == expected


def test_link_lines_count_from_top_of_file() -> None:
    text = "---\na: 1\n---\n# T\n\npara [[One]]\nsecond line [[Two]]\n\n- item [[Three]]\n"
    assert [(lk.target, lk.line) for lk in parse_note(text, "n.md").links] == [
        ("One", 6),
        ("Two", 7),
        ("Three", 9),
    ]


def test_frontmatter_links_and_fields() -> None:
    text = "---\nup: '[[Parent]]'\nrelated:\n  - '[[A]]'\n  - '[[B|b]]'\ntype: decision\n---\n"
    note = parse_note(text, "n.md")
    assert [(lk.kind, lk.target, lk.line) for lk in note.links] == [
        ("frontmatter", "Parent", 2),
        ("frontmatter", "A", 4),
        ("frontmatter", "B", 5),
    ]
    assert ("type", "decision") in [(f.key, f.value) for f in note.fields]


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("#tag and #nested/deep/ and (#paren)", ["tag", "nested/deep", "paren"]),
        ("#123 is not a tag but #y2024 is", ["y2024"]),
        ("a#b, url http://x.com/#frag, `#code`, [[N#Head]]", []),
        ("# Heading is not a tag\n\n#real", ["real"]),
        ("#café #日本", ["café", "日本"]),
        ("---\ntags: [one, '#two']\n---\nbody #three", ["one", "two", "three"]),
        ("---\ntags: a, b\n---\n", ["a", "b"]),
    ],
)
def test_tags(text: str, tags: list[str]) -> None:
    assert [t for t, _ in parse_note(text, "n.md").tags] == tags


def test_inline_fields_and_blocks() -> None:
    text = "status:: done\n- **owner**:: Ana\n\nA [due:: 2024-05-01] (prio:: high) x. ^b1\n"
    note = parse_note(text, "n.md")
    assert [(f.key, f.value, f.line) for f in note.fields] == [
        ("status", "done", 1),
        ("owner", "Ana", 2),
        ("due", "2024-05-01", 4),
        ("prio", "high", 4),
    ]
    assert note.blocks == (("b1", 4),)


@pytest.mark.parametrize(
    ("text", "path", "title"),
    [
        ("---\ntitle: From FM\n---\n# H1\n", "x.md", "From FM"),
        ("## H2 first\n# The H1\n", "x.md", "The H1"),
        ("no headings", "dir/My Note.md", "My Note"),
        ("---\ntitle: 2024\n---\n", "x.md", "2024"),
    ],
)
def test_title_rules(text: str, path: str, title: str) -> None:
    assert parse_note(text, path).title == title


def test_headings_aliases_spans() -> None:
    text = (
        "---\naliases: [A1, 'A 2']\n---\n# One\n\n## Two `code`\n\n```js\nx\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    note = parse_note(text, "n.md")
    assert note.aliases == ("A1", "A 2")
    assert [(h.level, h.text, h.line) for h in note.headings] == [
        (1, "One", 4),
        (2, "Two `code`", 6),
    ]
    assert [(s.kind, s.start, s.end) for s in note.spans] == [("code", 8, 10), ("table", 12, 14)]


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [unclosed\n---\nbody",
        "---\n- a list\n- not a mapping\n---\nbody",
        "---\n\t tab: indent: bad\n---\nbody",
    ],
)
def test_broken_frontmatter_warns_and_keeps_body(text: str) -> None:
    note = parse_note(text, "n.md")
    assert note.frontmatter == {}
    assert note.body == "body"
    assert note.warnings and "frontmatter" in note.warnings[0]


def test_frontmatter_values_are_json_safe() -> None:
    note = parse_note(
        "---\nd: 2024-01-02\nt: 2024-01-02 10:00:00\nn: .nan\ns: !!set {a}\n---\n", "n.md"
    )
    assert note.frontmatter["d"] == "2024-01-02"
    assert note.frontmatter["t"].startswith("2024-01-02T10:00")
    assert note.frontmatter["n"] is None


def test_split_frontmatter_requires_closing_fence() -> None:
    assert split_frontmatter("---\na: 1\nno close") == (None, "---\na: 1\nno close", 1)
    assert split_frontmatter("---\na: 1\n---\nbody") == ("a: 1\n", "body", 4)
    assert split_frontmatter("---\r\na: 1\r\n---\r\nbody")[1] == "body"


markdownish = st.lists(
    st.sampled_from(
        [
            *"ab #[]()|!^`$:-*\n\\<>/\"'{}~ 東é\t\r\x00",
            "---",
            "[[",
            "]]",
            "```",
            "$$",
            "::",
            "\n- ",
            "\n# ",
            "\n    ",
        ]
    ),
    max_size=120,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(fm=markdownish, body=markdownish)
def test_random_markdown_never_crashes(fm: str, body: str) -> None:
    note = parse_note(f"---\n{fm}\n---\n{body}", "x/y.md")
    assert isinstance(note.title, str) and note.title
    for link in note.links:
        assert isinstance(link, Link) and link.line >= 1
