"""The best passages of one document for `--chunks` and for the reranker.

A document found by meaning has its passages ranked by vector similarity already. One found by
keywords ranks its stored chunks by the query words they contain: the share of distinct words
present (0..1), then how often they occur, then position.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.search import snippets
from engram.search.results import Passage
from engram.store.pages import page_at
from engram.store.vectors import ChunkRow

PER_DOC = 3


def by_keywords(
    text: str, chunks: Sequence[ChunkRow], needles: Sequence[str]
) -> list[tuple[ChunkRow, float]]:
    """Chunks with a keyword score (0..1), best first."""
    scored = [(ch, *_matches(text[ch.start : ch.end], needles)) for ch in chunks]
    scored.sort(key=lambda s: (-s[1], -s[2], s[0].seq))
    return [(ch, share) for ch, share, _ in scored]


def keyword_share(span: str, needles: Sequence[str]) -> float:
    """The share (0..1) of distinct query words that occur in `span`."""
    return _matches(span, needles)[0]


def _matches(span: str, needles: Sequence[str]) -> tuple[float, int]:
    words = list(dict.fromkeys(n.lower() for n in needles if n.strip()))
    lowered = span.lower()
    counts = [lowered.count(w) for w in words]
    return (sum(1 for c in counts if c) / len(words) if words else 0.0), sum(counts)


def build(
    text: str,
    ranked: Sequence[tuple[ChunkRow, float]],
    needles: Sequence[str],
    n: int = PER_DOC,
    paged: bool = False,
) -> tuple[Passage, ...]:
    """Passages (snippet, lines, score, highlights) for the first `n` ranked chunks; of a
    `paged` text (a PDF), each with its page."""
    out = []
    for ch, score in ranked[:n]:
        snip = snippets.in_span(text, ch.start, ch.end, list(needles))
        page = page_at(text, ch.start) if paged else None
        out.append(
            Passage(snip.text, snip.line, ch.end_line, max(0.0, score), snip.highlights, page)
        )
    return tuple(out)
