"""Chunking a paged text (a PDF: store/pages.py) for embedding (pure: no model, no I/O).

A chunk never crosses a page, so every passage has one page. Inside a page, lines are packed
as a note's paragraphs are (index/chunk.py: sentences, overlap, token budget). The heading
path of a page comes from the PDF's outline: the sections open when the page starts, plus the
first section that starts on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.index.chunk import Chunk, CountTokens, _Block, _Builder, _Lines, _pieces

Outline = Sequence[tuple[int, str, int]]  # (level, title, line of the page it starts on)


def chunk_pages(
    text: str,
    title: str,
    outline: Outline,
    count_tokens: CountTokens,
    max_tokens: int = 254,
    overlap: float = 0.15,
) -> list[Chunk]:
    """Chunks of a paged text, page by page; `max_tokens` bounds count_tokens(embed_text)."""
    if max_tokens < 16:
        raise ValueError("max_tokens must be at least 16")
    lines = _Lines(text)
    builder = _Builder(text, lines, title, count_tokens, max_tokens, overlap)
    starting: dict[int, list[tuple[int, str]]] = {}
    for level, name, line in outline:
        starting.setdefault(line, []).append((level, name))
    stack: list[tuple[int, str]] = []
    for first, last in _pages(text, lines):
        here = starting.get(first, [])
        opened = _push(stack, here[0]) if here else stack
        path = tuple(name for _, name in opened)
        blocks = _paragraphs(text, lines, first, last)
        budget = builder.budget(path)
        groups = [_pieces(b, lines, count_tokens, budget) for b in blocks]
        if any(groups):
            builder.pack(path, [g for g in groups if g])
        for heading in here:
            stack = _push(stack, heading)
    return builder.chunks


def _push(stack: list[tuple[int, str]], heading: tuple[int, str]) -> list[tuple[int, str]]:
    return [h for h in stack if h[0] < heading[0]] + [heading]


def _pages(text: str, lines: _Lines) -> list[tuple[int, int]]:
    """(first line, last line) of each page; the form-feed lines between them excluded."""
    out: list[tuple[int, int]] = []
    first = 1
    for line in range(1, len(lines) + 1):
        start, end = lines.span(line)
        if text[start:end] == "\f":
            out.append((first, line - 1))
            first = line + 1
    out.append((first, len(lines)))
    return [(a, b) for a, b in out if a <= b]


def _paragraphs(text: str, lines: _Lines, first: int, last: int) -> list[_Block]:
    """Runs of non-blank lines between `first` and `last`."""
    out: list[_Block] = []
    start: int | None = None
    for line in range(first, last + 1):
        lo, hi = lines.span(line)
        if text[lo:hi].strip():
            start = line if start is None else start
        elif start is not None:
            out.append(_Block("para", start, line - 1))
            start = None
    if start is not None:
        out.append(_Block("para", start, last))
    return out
