"""A parsed note flattened into the rows the store writes (pure; runs in parsing workers)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from engram.store import documents as docs
from engram.store.fts import cjk_column
from engram.store.pages import join_pages
from engram.vault.parse import Link, ParsedNote

if TYPE_CHECKING:
    from engram.vault.canvas import Canvas
    from engram.vault.pdf import PdfText

DATE_KEYS = ("date", "created", "timestamp", "updated")


def note_record(
    collection: str,
    rel: str,
    mtime_ns: int,
    size: int,
    sha: str,
    text: str,
    p: ParsedNote,
    warnings: tuple[str, ...],
) -> docs.NoteRecord:
    """Flatten a parse result into the rows the store writes."""
    heading_text = "\n".join(h.text for h in p.headings if h.text != p.title)
    return docs.NoteRecord(
        collection=collection,
        path=rel,
        title=p.title,
        hash=sha,
        mtime_ns=mtime_ns,
        size=size,
        body_line=p.body_line,
        doc_date=_doc_date(p.frontmatter, mtime_ns),
        frontmatter=p.frontmatter,
        aliases=p.aliases,
        warnings=warnings,
        text=text,
        fts_headings=heading_text,
        fts_props=_props_text(p.frontmatter),
        fts_body=p.body,
        fts_cjk=cjk_column(p.title, p.body),
        headings=tuple((h.level, h.text, h.line) for h in p.headings),
        links=tuple(
            (lk.kind, lk.target, lk.heading, lk.block, lk.display, int(lk.embed), lk.line)
            for lk in p.links
        ),
        tags=p.tags,
        fields=tuple((fl.key, fl.value, fl.line, fl.source) for fl in p.fields),
        blocks=p.blocks,
    )


def _props_text(frontmatter: dict[str, Any]) -> str:
    """Frontmatter values as searchable text (title and aliases already have their column)."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif value is not None and not isinstance(value, bool):
            parts.append(str(value))

    for key, value in frontmatter.items():
        if key not in ("title", "aliases", "alias"):
            walk(value)
    return "\n".join(parts)


def _doc_date(frontmatter: dict[str, Any], mtime_ns: int) -> str:
    """The note's date for after:/before: filters: a frontmatter date, else modified time."""
    for key in DATE_KEYS:
        value = frontmatter.get(key)
        if isinstance(value, str) and len(value) >= 10 and _is_iso_date(value[:10]):
            return value
    return dt.datetime.fromtimestamp(mtime_ns / 1e9, dt.UTC).isoformat(timespec="seconds")


def _is_iso_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def pdf_record(
    collection: str, rel: str, mtime_ns: int, size: int, sha: str, pdf: PdfText
) -> docs.NoteRecord:
    """A PDF's rows: its pages as one paged text (store/pages.py), its outline as headings
    (each at the first line of its page), its metadata searchable; titled by its file name,
    as Obsidian shows it."""
    text = join_pages(pdf.pages)
    starts = [1]
    for page in pdf.pages[:-1]:
        starts.append(starts[-1] + page.count("\n") + 2)
    headings = tuple(
        (min(level, 6), title, starts[page - 1])
        for level, title, page in pdf.outline
        if 1 <= page <= len(starts)
    )
    meta = dict(pdf.meta)
    frontmatter: dict[str, Any] = {"pages": pdf.page_count, **meta}
    title = PurePosixPath(rel).stem
    return docs.NoteRecord(
        collection=collection,
        path=rel,
        title=title,
        hash=sha,
        mtime_ns=mtime_ns,
        size=size,
        body_line=1,
        doc_date=_doc_date(meta, mtime_ns),
        frontmatter=frontmatter,
        aliases=(),
        warnings=pdf.warnings,
        text=text,
        fts_headings="\n".join(h[1] for h in headings),
        fts_props="\n".join(v for k, v in pdf.meta if k != "created"),
        fts_body=text,
        fts_cjk=cjk_column(title, text),
        headings=headings,
        links=(),
        tags=(),
        fields=(),
        blocks=(),
    )


def canvas_parsed(canvas: Canvas, rel: str) -> ParsedNote:
    """A canvas's text parsed as the note it reads as, titled by its file name, with its file
    nodes as links of kind "canvas" (in place of the `[[path]]` lines that show them)."""
    from engram.vault.parse import parse_note

    parsed = parse_note(canvas.text, rel)
    shown = {f.line for f in canvas.files}
    nodes = [
        Link("canvas", f.path, *_subpath(f.subpath), None, False, f.line) for f in canvas.files
    ]
    links = sorted(
        [lk for lk in parsed.links if lk.line not in shown] + nodes, key=lambda lk: lk.line
    )
    return replace(
        parsed,
        title=PurePosixPath(rel).stem,
        links=tuple(links),
        warnings=canvas.warnings + parsed.warnings,
    )


def _subpath(sub: str | None) -> tuple[str | None, str | None]:
    """(heading, block) of a file node's `#heading` or `#^block`."""
    if not sub or len(sub) < 2:
        return None, None
    return (None, sub[2:] or None) if sub.startswith("#^") else (sub[1:], None)
