"""Result filters as SQL, applied inside retrieval (never after truncation)."""

from __future__ import annotations

from dataclasses import dataclass

from engram.codec import arg
from engram.store.tags import has_tag, tag_params

MAX_ITEMS = 200
KINDS = ("note", "memory")  # the person's notes; Engram's memory (facts, ledger, daily notes)


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
    kinds: tuple[str, ...] = arg(
        (),
        wire="kind",
        max_items=len(KINDS),
        choices=KINDS,
        doc="note: the person's notes; memory: Engram's facts, ledger, daily notes and "
        "reflections; both: everything; none given: the person's notes, unless `path` says "
        "where to look",
    )
    not_collections: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=128)
    not_path_prefixes: tuple[str, ...] = arg(
        (), wire="notPath", max_items=MAX_ITEMS, max_len=4096, doc="leave out these prefixes"
    )
    not_tags: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=200, doc="none of these")
    not_fields: tuple[tuple[str, str], ...] = arg(
        (), max_items=MAX_ITEMS, doc="leave out notes with these [name, value] properties"
    )
    # where Engram's memory lives: (collection, path prefix) pairs the service fills in from
    # the vaults' facts folders when a kind is asked for
    memory_paths: tuple[tuple[str, str], ...] = arg((), local=True)

    def is_empty(self) -> bool:
        """True when nothing is filtered."""
        return self == Filters()

    def narrows(self) -> bool:
        """True when the filters keep a part of the index worth listing before a vector
        search; leaving a few notes out (the default `kinds`, the `not_` filters) is cheaper
        checked on the nearest passages."""
        leave_out = Filters(
            kinds=self.kinds if self.kinds == ("note",) else (),
            not_collections=self.not_collections,
            not_path_prefixes=self.not_path_prefixes,
            not_tags=self.not_tags,
            not_fields=self.not_fields,
            memory_paths=self.memory_paths,
        )
        return self != leave_out


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
    _leave_out(f, alias, sql, params)
    _kinds(f, alias, sql, params)
    return ("".join(f" AND {s}" for s in sql), params)


def _leave_out(f: Filters, alias: str, sql: list[str], params: list[object]) -> None:
    """The negated filters: `-collection:`, `-path:`, `-tag:`, `-key:value`."""
    if f.not_collections:
        sql.append(f"{alias}.collection NOT IN ({','.join('?' * len(f.not_collections))})")
        params.extend(f.not_collections)
    for prefix in f.not_path_prefixes:
        sql.append(f"{alias}.path NOT LIKE ? ESCAPE '\\'")
        params.append(_like_prefix(prefix.lstrip("/")))
    for tag in f.not_tags:
        sql.append(f"NOT {has_tag(f'{alias}.id')}")
        params.extend(tag_params(tag))
    for key, value in f.not_fields:
        sql.append(
            f"NOT EXISTS (SELECT 1 FROM fields fl WHERE fl.doc_id = {alias}.id"
            " AND fl.key = ? COLLATE NOCASE AND fl.value = ? COLLATE NOCASE)"
        )
        params.extend((key, value))


def _kinds(f: Filters, alias: str, sql: list[str], params: list[object]) -> None:
    """`kinds`: Engram's memory is what lies under `memory_paths`, the rest is the person's."""
    if not f.kinds or set(f.kinds) >= set(KINDS):
        return
    if not f.memory_paths:  # no vault keeps memory here: everything is the person's
        if "note" not in f.kinds:
            sql.append("0")
        return
    memory = " OR ".join(
        f"({alias}.collection = ? AND {alias}.path LIKE ? ESCAPE '\\')" for _ in f.memory_paths
    )
    sql.append(f"({memory})" if "memory" in f.kinds else f"NOT ({memory})")
    for collection, prefix in f.memory_paths:
        params.extend((collection, _like_prefix(prefix)))
