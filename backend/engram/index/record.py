"""A parsed note flattened into the rows the store writes (pure; runs in parsing workers)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from engram.store import documents as docs
from engram.store.fts import cjk_column
from engram.vault.parse import ParsedNote

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
