"""Result filters as SQL, applied inside retrieval (never after truncation)."""

from __future__ import annotations

from dataclasses import dataclass

from engram.codec import arg
from engram.store.tags import has_tag, tag_params

MAX_ITEMS = 200


@dataclass(frozen=True)
class Filters:
    """Restrictions a query places on documents; empty means no restriction."""

    collections: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=128)
    path_prefixes: tuple[str, ...] = arg(
        (), wire="path", max_items=MAX_ITEMS, max_len=4096, doc="folder or path prefixes"
    )
    tags: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=200, doc="all of these tags")
    fields: tuple[tuple[str, str], ...] = arg(
        (), max_items=MAX_ITEMS, doc="frontmatter properties as [name, value] pairs"
    )
    after: str | None = arg(None, max_len=32, date=True, doc="modified on or after this date")
    before: str | None = arg(None, max_len=32, date=True, doc="modified before this date")
    doc_ids: tuple[int, ...] | None = arg(None, local=True)

    def is_empty(self) -> bool:
        """True when nothing is filtered."""
        return self == Filters()


def _like_prefix(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def where(f: Filters, alias: str = "d") -> tuple[str, list[object]]:
    """A WHERE fragment (starting with ' AND', or '') and its parameters for `documents AS d`."""
    sql: list[str] = []
    params: list[object] = []
    if f.collections:
        sql.append(f"{alias}.collection IN ({','.join('?' * len(f.collections))})")
        params.extend(f.collections)
    if f.path_prefixes:
        sql.append(
            "(" + " OR ".join(f"{alias}.path LIKE ? ESCAPE '\\'" for _ in f.path_prefixes) + ")"
        )
        params.extend(_like_prefix(p.lstrip("/")) for p in f.path_prefixes)
    for tag in f.tags:  # case ignored; a nested tag counts for its parents (store/tags.py)
        sql.append(has_tag(f"{alias}.id"))
        params.extend(tag_params(tag))
    for key, value in f.fields:
        sql.append(
            f"EXISTS (SELECT 1 FROM fields fl WHERE fl.doc_id = {alias}.id"
            " AND fl.key = ? COLLATE NOCASE AND fl.value = ? COLLATE NOCASE)"
        )
        params.extend((key, value))
    if f.after:
        sql.append(f"{alias}.doc_date >= ?")
        params.append(f.after)
    if f.before:
        sql.append(f"{alias}.doc_date < ?")
        params.append(f.before)
    if f.doc_ids is not None:
        sql.append(f"{alias}.id IN ({','.join('?' * len(f.doc_ids)) or 'NULL'})")
        params.extend(f.doc_ids)
    return ("".join(f" AND {s}" for s in sql), params)
