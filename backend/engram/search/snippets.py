"""Snippets: a short fragment around the best match, its highlights and its line number."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.store.search import SNIPPET_END, SNIPPET_START

_WS = re.compile(r"\s+")
ELLIPSIS = "…"


@dataclass(frozen=True)
class Snippet:
    """Display text, [start, end) offsets of matched terms in it, and the 1-based file line."""

    text: str
    highlights: tuple[tuple[int, int], ...]
    line: int


def body_offset(text: str, body_line: int) -> int:
    """Character offset where line `body_line` (1-based) starts."""
    pos = 0
    for _ in range(body_line - 1):
        nxt = text.find("\n", pos)
        if nxt < 0:
            return len(text)
        pos = nxt + 1
    return pos


def line_at(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, max(0, offset)) + 1


def _assemble(segments: list[tuple[str, bool]]) -> tuple[str, tuple[tuple[int, int], ...]]:
    out: list[str] = []
    marks: list[tuple[int, int]] = []
    length = 0
    for seg, is_match in segments:
        seg = _WS.sub(" ", seg)
        if not seg:
            continue
        if is_match:
            marks.append((length, length + len(seg)))
        out.append(seg)
        length += len(seg)
    return "".join(out), tuple(marks)


def from_marked(marked: str, text: str, body_line: int) -> Snippet | None:
    """Turn an FTS5 snippet (matches wrapped in control marks) into a Snippet; None if unmarked."""
    if SNIPPET_START not in marked:
        return None
    parts = re.split(f"({SNIPPET_START}|{SNIPPET_END})", marked)
    segments: list[tuple[str, bool]] = []
    inside = False
    for part in parts:
        if part == SNIPPET_START:
            inside = True
        elif part == SNIPPET_END:
            inside = False
        elif part:
            segments.append((part, inside))
    raw = "".join(seg for seg, _ in segments)
    core = raw.strip(ELLIPSIS)
    first_match = next((i for i, (_, m) in enumerate(segments) if m), 0)
    before_match = "".join(seg for seg, _ in segments[:first_match]).lstrip(ELLIPSIS)
    start = body_offset(text, body_line)
    found = text.find(core, start)
    line = line_at(text, found + len(before_match)) if found >= 0 else body_line
    display, marks = _assemble(segments)
    return Snippet(display.strip(), _shift(marks, display), line)


def _shift(marks: tuple[tuple[int, int], ...], display: str) -> tuple[tuple[int, int], ...]:
    lead = len(display) - len(display.lstrip())
    limit = len(display.strip())
    return tuple((max(0, s - lead), min(limit, e - lead)) for s, e in marks)


def around(text: str, body_line: int, needles: list[str], width: int = 160) -> Snippet:
    """A window of the body around the first occurrence of any needle (case-insensitive)."""
    return in_span(text, body_offset(text, body_line), len(text), needles, width)


def in_span(text: str, start: int, end: int, needles: list[str], width: int = 160) -> Snippet:
    """A window of text[start:end] around the first needle found (else its beginning)."""
    lowered = text[:end].lower()
    hits = [lowered.find(n.lower(), start) for n in needles if n]
    pos = min((h for h in hits if h >= 0), default=-1)
    if pos < 0:
        stripped = len(text[start:end]) - len(text[start:end].lstrip())
        pos, lo = start + stripped, start + stripped
    else:
        lo = max(start, pos - width // 3)
    hi = min(end, lo + width)
    window = text[lo:hi]
    segments: list[tuple[str, bool]] = [(ELLIPSIS, False)] if lo > start else []
    words = sorted((n for n in needles if n), key=len, reverse=True)
    last = 0
    if words:
        pattern = re.compile("|".join(re.escape(n) for n in words), re.IGNORECASE)
        for m in pattern.finditer(window):
            segments.append((window[last : m.start()], False))
            segments.append((m.group(0), True))
            last = m.end()
    segments.append((window[last:], False))
    if hi < end:
        segments.append((ELLIPSIS, False))
    display, marks = _assemble(segments)
    return Snippet(display.strip(), _shift(marks, display), line_at(text, pos))


def first_lines(text: str, body_line: int, width: int = 160) -> Snippet:
    """The start of the body, for results without a located match."""
    start = body_offset(text, body_line)
    body = text[start:]
    stripped = body.lstrip()
    line = line_at(text, start + len(body) - len(stripped))
    display = _WS.sub(" ", stripped[:width]).strip()
    if len(stripped) > width:
        display += ELLIPSIS
    return Snippet(display, (), line)
