"""Backlinks, outgoing links and unresolved links of stored notes, with each link's line.

A link's context is its line cut around the link. The index keeps a link's line but not its
column, so each line is scanned for its links once and every stored link takes the next
place its own text holds there; a line is stripped once, and each cut squeezes only the
few hundred characters it shows (none on a line already single-spaced). A note of 10,000
links on one 1 MB line thus costs one pass over the line, not one per link.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engram.graph.results import LinkRef, UnresolvedLink
from engram.store import graph as store
from engram.store.graph import LinkRow
from engram.vault.spans import line_spans

CONTEXT_CHARS = 240
REACH = 64  # at most this many widths of characters are read each side of a link

# kind, target, heading, block, display, embed: what tells a link from its neighbours
LinkKey = tuple[str, str, str | None, str | None, str | None, bool]
Reader = Callable[[str, int, LinkKey], str]


def backlinks(
    conn: Any, doc_id: int, limit: int | None = None, leave_out: Sequence[str] = ()
) -> list[LinkRef]:
    """Every link that resolves to the note, from any note (itself included) but those under
    the `leave_out` path prefixes, by path, line (the first `limit` of them)."""
    rows = store.backlinks(conn, doc_id, leave_out)[:limit]
    lines = _line_reader(conn, [r.source_hash for r in rows])
    return [_ref(r, r.other_path, True, lines) for r in rows]


def outgoing(conn: Any, doc_id: int) -> list[LinkRef]:
    """Every link written in the note, resolved or not, in line order."""
    rows = store.outgoing(conn, doc_id)
    lines = _line_reader(conn, [r.source_hash for r in rows])
    return [_ref(r, r.other_path, r.other_id is not None, lines) for r in rows]


def unresolved(
    conn: Any, collection: str, subpaths: bool, alias_of: Callable[[str], str | None]
) -> list[UnresolvedLink]:
    """Links to no file; with `subpaths`, also links to a missing heading or block."""
    rows = store.unresolved(conn, collection, subpaths)
    lines = _line_reader(conn, [r[1] for r in rows])
    out = []
    for source, source_hash, resolved, *fields in rows:
        line, kind, target, heading, block, display, embed, heading_ok, _block_ok = fields
        reason = "file" if resolved is None else "heading" if heading_ok == 0 else "block"
        out.append(
            UnresolvedLink(
                source=source,
                target=target,
                line=line,
                context=lines(
                    source_hash, line, (kind, target, heading, block, display, bool(embed))
                ),
                kind=kind,
                embed=bool(embed),
                heading=heading,
                block=block,
                reason=reason,
                alias_of=alias_of(target) if reason == "file" and target else None,
            )
        )
    return out


def _ref(r: LinkRow, path: str | None, note: bool, lines: Reader) -> LinkRef:
    key = (r.kind, r.target, r.heading, r.block, r.display, bool(r.embed))
    return LinkRef(
        path=path,
        title=r.other_title,
        line=r.line,
        context=lines(r.source_hash, r.line, key),
        target=r.target,
        kind=r.kind,
        embed=bool(r.embed),
        heading=r.heading,
        block=r.block,
        display=r.display,
        note=note,
        heading_found=None if r.heading_ok is None else bool(r.heading_ok),
        block_found=None if r.block_ok is None else bool(r.block_ok),
    )


def _line_reader(conn: Any, hashes: list[str]) -> Reader:
    """A function giving a stored link's line (1-based) in a stored file, cut around it.

    Asked in the order the links are stored (by line, then as the parser met them), it gives
    the n-th link of the same text on a line the n-th place that text is written there."""
    texts = store.texts(conn, hashes)
    split: dict[str, list[str]] = {}
    seen: dict[tuple[str, int], _Line] = {}

    def line_of(content_hash: str, line: int, key: LinkKey) -> str:
        found = seen.get((content_hash, line))
        if found is None:
            lines = split.get(content_hash)
            if lines is None:
                lines = split[content_hash] = texts.get(content_hash, "").split("\n")
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            found = seen[(content_hash, line)] = _Line(text, line)
        return found.context(key)

    return line_of


class _Line:
    """One line of a note, stripped once, with the places of its links found once."""

    def __init__(self, line: str, number: int) -> None:
        self.text = line.strip()
        self.lead = len(line) - len(line.lstrip())
        # one check here spares 10,000 cuts their squeezing: 8 ms against 35 on a 1 MB line
        self.squeezed = " ".join(self.text.split()) == self.text
        self.places: dict[LinkKey, list[int]] = {}  # by link, the last place first
        self.first: dict[str, int] = {}  # by target (lower case), its first place
        for span in line_spans(line, number):
            k = span.link
            key = (k.kind, k.target, k.heading, k.block, k.display, k.embed)
            self.places.setdefault(key, []).append(span.start - self.lead)
            self.first.setdefault(k.target.lower(), span.start - self.lead)
        for queue in self.places.values():
            queue.reverse()

    def context(self, key: LinkKey) -> str:
        """The line cut around the next place of the link `key`: a frontmatter link reads
        as a wikilink on its line; one stored otherwise than the line now reads is placed
        at its target's first link, else the line's start."""
        kind, target, heading, block, display, embed = key
        kind = "wikilink" if kind == "frontmatter" else kind
        queue = self.places.get((kind, target, heading, block, display, embed))
        at = queue.pop() if queue else self.first.get(target.lower())
        return _cut(self.text, at, squeezed=self.squeezed)


def context(line: str, at: int | None = None, width: int = CONTEXT_CHARS) -> str:
    """`line` with white space squeezed, cut to `width` characters with offset `at` (a
    link's place; None: the start) a third of the way in, `…` where text was left out."""
    lead = len(line) - len(line.lstrip())
    return _cut(line.strip(), None if at is None else max(0, at - lead), width)


def _cut(text: str, at: int | None, width: int = CONTEXT_CHARS, squeezed: bool = False) -> str:
    """`context` of a stripped line (`squeezed`: its white space is single spaces already).
    It reads a width of characters each side of `at`, more only where white space squeezed
    them shorter (REACH widths at most), so a cut costs the same on a line of 200 characters
    or of a million."""
    at = 0 if at is None else min(at, len(text))
    reach = width + 16
    while True:
        lo, hi = max(0, at - reach), min(len(text), at + reach)
        before, after = text[lo:at], text[at:hi]
        if not squeezed:
            before, after = _squeeze(before), _squeeze(after)
        if before.endswith(" ") and after.startswith(" "):
            after = after[1:]
        filled = (lo == 0 or len(before) >= width) and (hi == len(text) or len(after) >= width)
        if filled or reach >= REACH * width:
            break
        reach = min(reach * 4, REACH * width)
    window = before + after
    if lo == 0 and hi == len(text) and len(window) <= width:
        return window
    start = max(0, min(len(before) - width // 3, len(window) - width))
    piece = window[start : start + width].strip()
    left = start > 0 or lo > 0
    right = start + width < len(window) or hi < len(text)
    return ("…" if left else "") + piece + ("…" if right else "")


def _squeeze(piece: str) -> str:
    """Each run of white space as one space, a run at either end included."""
    core = " ".join(piece.split())
    if not core:
        return " " if piece else ""
    return (" " if piece[0].isspace() else "") + core + (" " if piece[-1].isspace() else "")
