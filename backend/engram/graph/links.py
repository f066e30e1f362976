"""Backlinks, outgoing links and unresolved links of stored notes, with each link's line."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from engram.graph.results import LinkRef, UnresolvedLink
from engram.store import graph as store
from engram.store.graph import LinkRow

CONTEXT_CHARS = 240
_SPACE = re.compile(r"\s+")


def backlinks(conn: Any, doc_id: int) -> list[LinkRef]:
    """Every link that resolves to the note, from any note (itself included), by path, line."""
    rows = store.backlinks(conn, doc_id)
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
        line, kind, target, heading, block, _display, embed, heading_ok, _block_ok = fields
        reason = "file" if resolved is None else "heading" if heading_ok == 0 else "block"
        out.append(
            UnresolvedLink(
                source=source,
                target=target,
                line=line,
                context=lines(source_hash, line, target),
                kind=kind,
                embed=bool(embed),
                heading=heading,
                block=block,
                reason=reason,
                alias_of=alias_of(target) if reason == "file" and target else None,
            )
        )
    return out


def _ref(
    r: LinkRow, path: str | None, note: bool, lines: Callable[[str, int, str], str]
) -> LinkRef:
    return LinkRef(
        path=path,
        title=r.other_title,
        line=r.line,
        context=lines(r.source_hash, r.line, r.target),
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


def _line_reader(conn: Any, hashes: list[str]) -> Callable[[str, int, str], str]:
    """A function giving a stored file's line (1-based), trimmed around `needle`."""
    texts = store.texts(conn, hashes)
    split: dict[str, list[str]] = {}

    def line_of(content_hash: str, line: int, needle: str) -> str:
        lines = split.get(content_hash)
        if lines is None:
            lines = split[content_hash] = texts.get(content_hash, "").split("\n")
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return context(text, needle)

    return line_of


def context(line: str, needle: str, width: int = CONTEXT_CHARS) -> str:
    """A line with white space squeezed, cut to `width` characters around `needle`."""
    text = _SPACE.sub(" ", line).strip()
    if len(text) <= width:
        return text
    at = text.lower().find(needle.lower()) if needle else -1
    start = max(0, min(at - width // 3, len(text) - width)) if at >= 0 else 0
    piece = text[start : start + width].strip()
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(text) else "")
