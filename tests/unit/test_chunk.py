"""The heading-aware chunker: atomic blocks intact, exact offsets, limits, overlap, dedup."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.index.chunk import Chunk, chunk_note
from engram.vault.parse import ParsedNote, parse_note

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count(text: str) -> int:
    """A WordPiece-like stand-in: words and punctuation marks."""
    return len(_TOKEN.findall(text))


def chunks_of(text: str, max_tokens: int = 60, overlap: float = 0.15) -> list[Chunk]:
    chunks = chunk_note(text, parse_note(text, "note.md"), count, max_tokens, overlap)
    check_invariants(text, chunks, max_tokens)
    return chunks


def _embedded_body(c: Chunk) -> str:
    """The longest end of the chunk's text its embed text ends with."""
    n = 0
    while n < len(c.text) and c.embed_text.endswith(c.text[len(c.text) - n - 1 :]):
        n += 1
    return c.text[len(c.text) - n :]


def heading_lines(text: str, parsed: ParsedNote) -> set[int]:
    """Blank lines, heading lines and setext underlines."""
    lines = re.split(r"\r\n|\n|\r", text)
    underline = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
    out = {i for i, line in enumerate(lines, 1) if not line.strip()}
    out |= {h.line for h in parsed.headings}
    out |= {
        h.line + 1
        for h in parsed.headings
        if h.line < len(lines) and underline.match(lines[h.line])
    }
    return out


def check_invariants(text: str, chunks: list[Chunk], max_tokens: int) -> None:
    parsed = parse_note(text, "note.md")
    line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\n|\r", text)]
    body_start = (
        line_starts[parsed.body_line - 1] if parsed.body_line <= len(line_starts) else len(text)
    )
    for i, c in enumerate(chunks):
        assert c.seq == i
        assert text[c.start : c.end] == c.text and c.text.strip()
        assert c.start >= body_start  # frontmatter is never chunked
        assert c.start_line == sum(1 for s in line_starts if s <= c.start)
        assert c.end_line == sum(1 for s in line_starts if s <= c.end - 1)
        assert c.token_count == count(c.embed_text)
        assert c.token_count <= max_tokens
        if not c.truncated:  # the text, less leading heading lines the prefix names already
            body = _embedded_body(c)
            skipped = c.text[: len(c.text) - len(body)]
            assert body.strip() or not skipped.strip()
            first = c.start_line
            whole = range(first, first + skipped.count("\n"))  # lines wholly skipped
            assert set(whole) <= heading_lines(text, parsed), (c.text, c.embed_text)
        for span in parsed.spans:  # an atomic block is inside one chunk or outside it
            last = max(
                [
                    n
                    for n in range(span.start, span.end + 1)
                    if n <= len(line_starts)
                    and text[
                        line_starts[n - 1] : (line_starts[n] if n < len(line_starts) else len(text))
                    ].strip()
                ]
                or [span.start]
            )
            inside = c.start_line <= span.start and last <= c.end_line
            outside = c.end_line < span.start or span.end < c.start_line
            assert inside or outside, (span, c.start_line, c.end_line)


def prose(n: int, word: str = "word") -> str:
    return " ".join(f"{word}{i}." if i % 9 == 8 else f"{word}{i}" for i in range(n))


FENCE = "```python\n" + "\n".join(f"x{i} = {i} + 1" for i in range(12)) + "\n```"
MATH = "$$\n" + " + ".join(f"a_{i}" for i in range(20)) + "\n$$"
TABLE = "| a | b |\n|---|---|\n" + "\n".join(f"| r{i} | v{i} |" for i in range(8))
HTML = "<div>\n<p>" + prose(15) + "</p>\n</div>"


@pytest.mark.parametrize(
    ("block", "kind"), [(FENCE, "code"), (MATH, "math"), (TABLE, "table"), (HTML, "html")]
)
def test_atomic_blocks_are_never_split(block: str, kind: str) -> None:
    text = f"# T\n\n{prose(40)}\n\n{block}\n\n{prose(40, 'after')}\n"
    assert any(s.kind == kind for s in parse_note(text, "n.md").spans)
    chunks = chunks_of(text)
    holders = [c for c in chunks if block in c.text]
    assert len(holders) >= 1
    assert not any(block.splitlines()[1] in c.text and block not in c.text for c in chunks)


def test_oversize_atomic_block_is_its_own_truncated_chunk() -> None:
    big = "```\n" + "\n".join(f"line {i} of code" for i in range(200)) + "\n```"
    text = f"# T\n\nbefore\n\n{big}\n\nafter\n"
    chunks = chunks_of(text, max_tokens=50)
    [block] = [c for c in chunks if c.truncated]
    assert block.text == big and block.token_count <= 50
    assert block.start == text.index(big) and block.end == text.index(big) + len(big)
    assert [c.text for c in chunks if not c.truncated] == ["# T\n\nbefore", "after"]


def test_frontmatter_is_excluded_and_lines_count_from_the_file_top() -> None:
    text = "---\ntitle: Hello\ntags: [x]\n---\nFirst line.\n\nSecond paragraph.\n"
    [chunk] = chunks_of(text)
    assert chunk.text == "First line.\n\nSecond paragraph."
    assert (chunk.start_line, chunk.end_line) == (5, 7)
    assert chunk.embed_text == "Hello\nFirst line.\n\nSecond paragraph."
    assert chunk.heading_path == ()


def test_heading_paths_and_prefix() -> None:
    text = "# Guide\n\nintro\n\n## Install\n\nsteps\n\n### Linux\n\napt\n\n## Use\n\nrun it\n"
    chunks = chunks_of(text)
    assert [c.heading_path for c in chunks] == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "Linux"),
        ("Guide", "Use"),
    ]
    # a heading is embedded once, in the prefix's path, not again from the section's first line
    assert chunks[2].embed_text == "Guide\nInstall > Linux\napt"
    assert chunks[0].embed_text == "Guide\nintro"
    assert [c.text for c in chunks][:1] == ["# Guide\n\nintro"]  # the located text keeps it


def test_a_heading_the_shortened_prefix_leaves_out_is_embedded_from_the_text() -> None:
    title = " ".join(f"w{i}" for i in range(20))
    heading = " ".join(f"w{i}" for i in range(12))  # within the title's text, yet not its path
    chunks = chunks_of(f"# {title}\n\n## {heading}\n\nbody words here\n")
    section = [c for c in chunks if c.heading_path == (title, heading)]
    # title + heading is over half the limit, so the prefix is the title alone
    assert section and section[0].embed_text.startswith(f"{title}\n")
    assert f"## {heading}" in section[0].embed_text


def test_a_heading_without_content_joins_the_next_section() -> None:
    chunks = chunks_of("# Title\n## Part\n\ntext here\n")
    assert len(chunks) == 1 and chunks[0].text == "# Title\n## Part\n\ntext here"
    assert chunks[0].heading_path == ("Title", "Part")
    assert [c.text for c in chunks_of("para\n\n## Lonely heading\n")] == [
        "para",
        "## Lonely heading",
    ]


def test_long_sections_split_with_overlap_and_within_limits() -> None:
    text = "# Long\n\n" + "\n\n".join(prose(30, f"p{i}w") for i in range(6)) + "\n"
    chunks = chunks_of(text, max_tokens=80)
    assert len(chunks) >= 3
    for a, b in itertools.pairwise(chunks):
        assert b.start < a.end, "consecutive chunks of one section overlap"
        assert a.start < b.start
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_no_overlap_when_disabled() -> None:
    text = "\n\n".join(prose(30, f"p{i}w") for i in range(4))
    chunks = chunks_of(text, max_tokens=50, overlap=0.0)
    assert all(b.start >= a.end for a, b in itertools.pairwise(chunks))


def test_a_long_line_is_split_at_spaces() -> None:
    line = " ".join(f"w{i}" for i in range(500))  # one line, no sentence end
    chunks = chunks_of(f"{line}\n", max_tokens=40)
    assert len(chunks) > 10 and all(not c.truncated for c in chunks)
    assert chunks[0].text.startswith("w0 w1") and chunks[-1].text.endswith("w499")


def count_chars(text: str) -> int:
    return len(text)


def test_giant_word_split_by_characters_with_char_counter() -> None:
    blob = "B" * 3000
    text = f"{blob}\n"
    chunks = chunk_note(text, parse_note(text, "n.md"), count_chars, 100, 0.0)
    assert all(c.token_count <= 100 and not c.truncated for c in chunks)
    assert "".join(c.text for c in chunks) == blob


def test_editing_one_section_keeps_the_other_hashes() -> None:
    before = "# A\n\nalpha text\n\n# B\n\nbeta text\n\n# C\n\ngamma text\n"
    after = before.replace("beta text", "beta text, edited")
    old = {c.heading_path: c.text_hash for c in chunks_of(before)}
    new = {c.heading_path: c.text_hash for c in chunks_of(after)}
    assert old[("A",)] == new[("A",)] and old[("C",)] == new[("C",)]
    assert old[("B",)] != new[("B",)]


def test_crlf_and_unicode_offsets_are_exact() -> None:
    text = (
        "---\r\ntitle: Ünï\r\n---\r\n# 日本語 🚀\r\n\r\nça va? 😀 emoji ok.\r\n\r\n"
        "```\r\ncode\r\n```\r\n"
    )
    chunks = chunks_of(text)
    assert chunks and all(text[c.start : c.end] == c.text for c in chunks)
    assert chunks[0].start_line == 4 and "😀" in chunks[0].text
    assert all("\r" not in c.text[-1:] for c in chunks)


@pytest.mark.parametrize("text", ["", "---\ntitle: x\n---\n", "\n\n  \n", "---\nbroken: [\n---\n"])
def test_empty_bodies_give_no_chunks(text: str) -> None:
    assert chunks_of(text) == [] or all(c.text.strip() for c in chunks_of(text))


def test_setext_heading_is_one_block() -> None:
    chunks = chunks_of("Title\n=====\n\nbody text\n")
    assert chunks[0].heading_path == ("Title",) and chunks[0].text.startswith("Title\n=====")


def test_rejects_tiny_limits() -> None:
    with pytest.raises(ValueError):
        chunk_note("x", parse_note("x", "n.md"), count, max_tokens=4)


# --- property: random markdown never crashes, and the chunks cover the body -------------

_WORDS = st.sampled_from(
    [
        "alpha",
        "beta",
        "γάμμα",
        "日本",
        "🚀",
        "x.",
        "[[link]]",
        "#tag",
        "end!",
        "`code`",
        "$x$",
        "**b**",
        "a-b",
        "1.",
        "|",
        "$$",
        "```",
        "---",
    ]
)
_LINE = st.lists(_WORDS, min_size=0, max_size=25).map(" ".join)
_BLOCK = st.one_of(
    _LINE,
    st.builds(lambda lvl, t: "#" * lvl + " " + t, st.integers(1, 6), _LINE),
    st.builds(lambda ls: "```\n" + "\n".join(ls) + "\n```", st.lists(_LINE, max_size=6)),
    st.builds(lambda ls: "```\n" + "\n".join(ls), st.lists(_LINE, max_size=4)),  # unclosed
    st.builds(lambda ls: "$$\n" + "\n".join(ls) + "\n$$", st.lists(_LINE, max_size=4)),
    st.builds(lambda n: "| a | b |\n|---|---|\n" + "| c | d |\n" * n, st.integers(0, 5)),
    st.builds(lambda ls: "\n".join("- " + x for x in ls), st.lists(_LINE, max_size=5)),
    st.just(""),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_BLOCK, max_size=14),
    st.booleans(),
    st.sampled_from(["\n", "\r\n"]),
    st.integers(16, 80),
    st.floats(0.0, 0.3),
)
def test_random_markdown_never_crashes_and_is_covered(
    blocks: list[str], frontmatter: bool, newline: str, max_tokens: int, overlap: float
) -> None:
    text = ("---\ntitle: t\n---\n" if frontmatter else "") + "\n\n".join(blocks)
    text = text.replace("\n", newline)
    parsed = parse_note(text, "note.md")
    chunks = chunk_note(text, parsed, count, max_tokens, overlap)
    check_invariants(text, chunks, max_tokens)
    line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\n|\r", text)]
    body_start = (
        line_starts[parsed.body_line - 1] if parsed.body_line <= len(line_starts) else len(text)
    )
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    missing = [
        i for i in range(body_start, len(text)) if not text[i].isspace() and i not in covered
    ]
    assert not missing, repr(text[missing[0] : missing[0] + 20])
