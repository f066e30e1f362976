"""Link spans, the link-style rule and relinking after a move (vault/spans, rewrite, relink)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.errors import ConflictError
from engram.vault.parse import parse_note
from engram.vault.relink import StoredLink, relink
from engram.vault.resolve import LinkIndex, resolve
from engram.vault.rewrite import link_to
from engram.vault.spans import link_spans

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vaults"
FILES = [
    "Topics/Espresso Basics.md",
    "Topics/Grinder.md",
    "Archive/Brewing.md",
    "Guides/Pour.md",
    "Home.md",
    "Journal/2024/Day.md",
    "Café.md",
    "img/crema.png",
]
OLD = "Topics/Espresso Basics.md"


def moved(source: str, text: str, old: str, new: str, files: list[str] = FILES) -> tuple[str, int]:
    """Relink `text` (written in `source`) for a move, with links resolved as the index would."""
    before = LinkIndex.build(files)
    stored = [
        StoredLink(
            lk.kind,
            lk.target,
            lk.heading,
            lk.block,
            lk.display,
            lk.embed,
            lk.line,
            resolve(lk.target, source, before, markdown=lk.kind == "markdown").path,
        )
        for lk in parse_note(text, source).links
    ]
    after = LinkIndex.build([f for f in files if f != old] + [new])
    return relink(text, source, stored, old, new, after)


SHOT = "Topics/Shot.md"
CASES = [
    # bare names stay bare while the new name is unique in the vault
    ("Home.md", "[[Espresso Basics]]", SHOT, "[[Shot]]"),
    ("Home.md", "[[espresso basics]]", SHOT, "[[Shot]]"),
    ("Home.md", "[[ Espresso Basics ]]", SHOT, "[[ Shot ]]"),
    ("Home.md", "[[Espresso Basics|the basics]]", SHOT, "[[Shot|the basics]]"),
    ("Home.md", "[[Espresso Basics#Pull Time|how]]", SHOT, "[[Shot#Pull Time|how]]"),
    ("Home.md", "![[Espresso Basics#^blk]]", SHOT, "![[Shot#^blk]]"),
    ("Home.md", "[[Espresso Basics.md]]", SHOT, "[[Shot.md]]"),
    # ... and become the full path when another file has the name
    ("Home.md", "[[Espresso Basics]]", "Guides/Brewing.md", "[[Guides/Brewing]]"),
    ("Home.md", "[[Espresso Basics#A|b]]", "Guides/Brewing.md", "[[Guides/Brewing#A|b]]"),
    # a bare name that still finds the file after a move to another folder is left alone
    ("Home.md", "[[Espresso Basics]]", "Guides/Espresso Basics.md", "[[Espresso Basics]]"),
    # path links stay full paths, a leading slash is kept
    ("Home.md", "[[Topics/Espresso Basics]]", "Guides/Shot.md", "[[Guides/Shot]]"),
    ("Home.md", "[[/Topics/Espresso Basics|x]]", "Guides/Shot.md", "[[/Guides/Shot|x]]"),
    ("Home.md", "[[Topics/Espresso Basics]]", "Guides/Espresso Basics.md",
     "[[Guides/Espresso Basics]]"),
    # relative wikilinks stay relative
    ("Journal/2024/Day.md", "[[../../Topics/Espresso Basics]]", "Guides/Shot.md",
     "[[../../Guides/Shot]]"),
    ("Topics/Grinder.md", "[[./Espresso Basics|s]]", "Topics/Sub/Shot.md", "[[./Sub/Shot|s]]"),
    # markdown links: encoding, angle brackets, headings, rooted and relative paths
    ("Home.md", "[x](Topics/Espresso%20Basics.md)", "Guides/Shot Glass.md",
     "[x](Guides/Shot%20Glass.md)"),
    ("Home.md", "[x](<Topics/Espresso Basics.md>)", "Guides/Shot Glass.md",
     "[x](<Guides/Shot Glass.md>)"),
    ("Home.md", "[x](Topics/Espresso%20Basics.md#Pull%20Time)", "Guides/Shot Glass.md",
     "[x](Guides/Shot%20Glass.md#Pull%20Time)"),
    ("Home.md", "[x](/Topics/Espresso%20Basics.md)", "G/Shot (v2).md",
     "[x](/G/Shot%20%28v2%29.md)"),
    ("Home.md", "![x](Topics/Espresso%20Basics.md)", SHOT, "![x](Topics/Shot.md)"),
    ("Topics/Grinder.md", "[x](Espresso%20Basics.md)", "Guides/Shot.md", "[x](../Guides/Shot.md)"),
    ("Topics/Grinder.md", "[x](./Espresso%20Basics.md)", "Topics/Shot.md", "[x](./Shot.md)"),
    # frontmatter, tables, blockquotes and list items
    ("Home.md", '---\nup: "[[Espresso Basics]]"\n---\nbody\n', SHOT,
     '---\nup: "[[Shot]]"\n---\nbody\n'),
    ("Home.md", "| a | b |\n|---|---|\n| x | [[Espresso Basics\\|s]] |\n", SHOT,
     "| a | b |\n|---|---|\n| x | [[Shot\\|s]] |\n"),
    ("Home.md", "> [!note]\n> see [[Espresso Basics]]\n", SHOT, "> [!note]\n> see [[Shot]]\n"),
    ("Home.md", "- a\n  - b [[Espresso Basics]] c\n", SHOT, "- a\n  - b [[Shot]] c\n"),
    ("Home.md", "## About [[Espresso Basics]]\n", SHOT, "## About [[Shot]]\n"),
    # never touched: code, other notes, unresolved names, URLs, attachments
    ("Home.md", "`[[Espresso Basics]]` and [[Espresso]] and [[Espresso Basics 2]]", SHOT,
     "`[[Espresso Basics]]` and [[Espresso]] and [[Espresso Basics 2]]"),
    ("Home.md", "```\n[[Espresso Basics]]\n```\n\n    [[Espresso Basics]]\n", SHOT,
     "```\n[[Espresso Basics]]\n```\n\n    [[Espresso Basics]]\n"),
    ("Home.md", "[s](https://x.org/Espresso%20Basics.md) ![[crema.png]]", SHOT,
     "[s](https://x.org/Espresso%20Basics.md) ![[crema.png]]"),
    # a bare link the new name would capture (same folder wins) is pinned to its file
    ("Guides/Pour.md", "[[Brewing]] and [[Espresso Basics]]", "Guides/Brewing.md",
     "[[Archive/Brewing]] and [[Guides/Brewing]]"),
    # the moved note itself: links to itself, and relative links that would break
    (OLD, "[[#Pull]] [[Espresso Basics#Pull]]", SHOT, "[[#Pull]] [[Shot#Pull]]"),
    (OLD, "[g](./Grinder.md) and [[Grinder]]", "Guides/Shot.md",
     "[g](../Topics/Grinder.md) and [[Grinder]]"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "text", "new", "expected"), CASES)
def test_moving_a_note_rewrites_each_link_form_in_its_style(
    source: str, text: str, new: str, expected: str
) -> None:
    out, n = moved(source, text, OLD, new)
    assert out == expected
    pairs = zip(link_spans(text), link_spans(out), strict=True)
    assert n == sum(a.raw != b.raw for a, b in pairs)


def test_percent_encoded_letters_stay_percent_encoded() -> None:
    out, _ = moved("Home.md", "[x](Caf%C3%A9.md)", "Café.md", "Bar/Café Crème.md")
    assert out == "[x](Bar/Caf%C3%A9%20Cr%C3%A8me.md)"


def test_moving_an_attachment_rewrites_its_embeds() -> None:
    text = "![[crema.png]] ![[img/crema.png|200]] ![c](img/crema.png)"
    out, n = moved("Home.md", text, "img/crema.png", "media/crema 1.png")
    assert out == "![[crema 1.png]] ![[media/crema 1.png|200]] ![c](media/crema%201.png)"
    assert n == 3


def test_a_link_the_index_knows_but_the_text_lacks_is_a_conflict() -> None:
    stale = StoredLink("wikilink", "Espresso Basics", None, None, None, False, 3, OLD)
    after = LinkIndex.build([f for f in FILES if f != OLD] + [SHOT])
    with pytest.raises(ConflictError, match="engram update"):
        relink("nothing here\n", "Home.md", [stale], OLD, SHOT, after)


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        ("Topics/Grinder.md", "Home.md", "Grinder"),
        ("img/crema.png", "Home.md", "crema.png"),
        ("Archive/Brewing.md", "Guides/Pour.md", "Brewing"),
    ],
)
def test_link_to_prefers_the_bare_name(target: str, source: str, expected: str) -> None:
    assert link_to(target, source, LinkIndex.build(FILES)) == expected


def test_link_to_uses_the_path_when_the_name_is_shared() -> None:
    index = LinkIndex.build([*FILES, "Guides/Brewing.md"])
    assert link_to("Archive/Brewing.md", "Guides/Pour.md", index) == "Archive/Brewing"


def fixture_notes() -> list[tuple[str, str]]:
    out = []
    for vault in ("example", "linkforms"):
        for path in sorted((FIXTURES / vault).rglob("*.md")):
            if "/." not in path.as_posix():
                out.append((path.relative_to(FIXTURES / vault).as_posix(), path.read_text("utf-8")))
    return out


@pytest.mark.parametrize(("rel", "text"), fixture_notes())
def test_spans_find_every_link_the_parser_finds(rel: str, text: str) -> None:
    """Each stored link has its span on its line; each span's text is the target as written."""
    spans = link_spans(text)
    for span in spans:
        assert text[span.start : span.end] == span.raw
    found = [s.link for s in spans]
    for link in parse_note(text, rel).links:
        assert any(
            (f.kind, f.target, f.heading, f.block, f.display, f.embed)
            == (link.kind, link.target, link.heading, link.block, link.display, link.embed)
            and (f.line == link.line or link.kind == "frontmatter")
            for f in found
        ), link
