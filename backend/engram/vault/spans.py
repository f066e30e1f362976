"""Where each link sits in a note's text: the character span of its target, for rewriting.

`parse.parse_note` says what links a note has and on which line; this finds the same links in
the raw text with offsets. It walks the same markdown-it block structure (so nothing inside
code fences, math or HTML blocks counts), reads each paragraph, heading or table row from the
original lines (so blockquote markers and indentation keep their place), blanks inline code
and applies the parser's link patterns. Frontmatter links are found in the YAML text.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from .parse import (
    _MDLINK,
    _NEWLINE,
    _SCHEME,
    _WIKILINK,
    Link,
    _blank_code_spans,
    _inside,
    _markdown,
    _markdown_link,
    split_frontmatter,
    wikilink,
)

_LINE_START = re.compile(r"^", re.MULTILINE)


@dataclass(frozen=True)
class LinkSpan:
    """A link as written, with the span [start, end) of its target text in the whole note.

    `raw` is the target exactly as written (a markdown link's still URL-encoded, without `<>`);
    `angle` says a markdown link's destination is written `<...>`; `link` is what the parser
    makes of it (the fields the index stores).
    """

    link: Link
    start: int
    end: int
    raw: str
    angle: bool = False


def link_spans(text: str) -> list[LinkSpan]:
    """Every link of a note with its target's span, frontmatter first, in text order."""
    fm, body, body_line = split_frontmatter(text)
    starts = [m.start() for m in _LINE_START.finditer(text)]
    out: list[LinkSpan] = []
    if fm is not None:
        fm_start = text.index("\n") + 1
        for m in _WIKILINK.finditer(fm):
            line = bisect_right(starts, fm_start + m.start())
            link = wikilink(m.group(1), embed=False, line=line, kind="frontmatter")
            if link is not None:
                out.append(_wiki_span(link, fm_start + m.start(1), m.group(1)))
    try:
        tokens = _markdown().parse(body)
    except Exception:  # parse_note then stores no links either
        return out
    offset = body_line - 1
    seen: set[tuple[int, int]] = set()
    for tok in tokens:
        if tok.type != "inline" or not tok.map:
            continue
        first, last = tok.map[0] + offset, tok.map[1] + offset  # 0-based, end exclusive
        if (first, last) in seen:  # table cells of one row share the row's lines
            continue
        seen.add((first, last))
        begin = starts[first]
        end = starts[last] if last < len(starts) else len(text)
        out.extend(_scan(text[begin:end], begin, first + 1))
    return out


def line_spans(line: str, number: int) -> list[LinkSpan]:
    """The links written on one line of a note (its 1-based `number`), offsets within it.

    Read from the line alone: a link inside a code block or a code span running over
    several lines is found here though the parser skips it (for showing a link's place, not
    for rewriting it)."""
    return _scan(line, 0, number)


def _scan(segment: str, base: int, line0: int) -> list[LinkSpan]:
    """Links of a paragraph, heading or table row; each step takes time linear in the
    segment however many links it holds (a one-line note can hold 10,000)."""
    content = _blank_code_spans(segment)
    found: list[LinkSpan] = []
    wiki: list[tuple[int, int]] = []  # in text order, never overlapping
    newlines = [m.start() for m in _NEWLINE.finditer(segment)] if "\n" in segment else []

    def line_of(pos: int) -> int:
        return line0 + bisect_left(newlines, pos)

    def embed_at(pos: int) -> bool:
        return pos > 0 and content[pos - 1] == "!"

    for m in _WIKILINK.finditer(content):
        wiki.append(m.span())
        link = wikilink(m.group(1), embed=embed_at(m.start()), line=line_of(m.start()))
        if link is not None:
            found.append(_wiki_span(link, base + m.start(1), m.group(1)))
    for m in _MDLINK.finditer(content):
        if _inside(wiki, m.start()):  # markdown links never overlap one another
            continue
        dest = m.group(2)
        link = _markdown_link(dest, m.group(1), embed_at(m.start()), line_of(m.start()))
        if link is None:
            continue
        angle = dest.startswith("<")
        inner = dest[1:-1] if angle else dest
        raw = inner.partition("#")[0]
        start = base + m.start(2) + (1 if angle else 0)
        found.append(LinkSpan(link, start, start + len(raw), raw, angle))
    found.sort(key=lambda s: s.start)
    return found


def _wiki_span(link: Link, inner_start: int, inner: str) -> LinkSpan:
    """The target part of `[[target#sub|display]]`: up to the first `#`, `|` or `\\|`."""
    cut = len(inner)
    for mark in ("#", "|"):
        at = inner.find(mark)
        if at >= 0:
            cut = min(cut, at)
    if cut > 0 and cut < len(inner) and inner[cut] == "|" and inner[cut - 1] == "\\":
        cut -= 1
    raw = inner[:cut]
    lead = len(raw) - len(raw.lstrip())
    raw_stripped = raw.strip()
    start = inner_start + lead
    return LinkSpan(link, start, start + len(raw_stripped), raw_stripped)


def is_url(target: str) -> bool:
    """True for a destination with a scheme (`https:`, `obsidian:`): never a note link."""
    return bool(_SCHEME.match(target))
