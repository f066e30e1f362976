"""Link resolution bookkeeping: the vault's file list and where each stored link points.

Lists of ids, paths or keys are passed as one JSON array and read with `json_each`, so a
cold update's tens of thousands of values never hit SQLite's variable limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class StoredLink:
    """A link row with its source note's path and its current resolution."""

    id: int
    doc_id: int
    source: str  # the linking note's collection-relative path
    kind: str
    target: str
    heading: str | None
    block: str | None
    key: str | None
    resolved_path: str | None
    resolved_doc_id: int | None
    heading_ok: int | None
    block_ok: int | None
    line: int


# A link as stored: kind, target, heading, block, display, embed, line, then its resolution:
# key, resolved_path, resolved_doc_id, heading_ok, block_ok
LinkRow = tuple[
    str, str, str | None, str | None, str | None, int, int,
    str | None, str | None, int | None, int | None, int | None,
]  # fmt: skip

_LINK = (
    "SELECT l.id, l.doc_id, d.path, l.kind, l.target, l.heading, l.block, l.key,"
    " l.resolved_path, l.resolved_doc_id, l.heading_ok, l.block_ok, l.line"
    # CROSS JOIN keeps links as the outer loop, so the link condition's index drives it
    " FROM links l CROSS JOIN documents d ON d.id = l.doc_id WHERE d.collection = ? AND "
)


def _array(values: Iterable[Any]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def file_paths(conn: Any, collection: str) -> set[str]:
    """Every file recorded for a collection's folder."""
    rows = conn.execute("SELECT path FROM vault_files WHERE collection = ?", (collection,))
    return {r[0] for r in rows}


def has_files(conn: Any, collection: str) -> bool:
    """Has the collection's folder been listed yet?"""
    row = conn.execute("SELECT 1 FROM vault_files WHERE collection = ? LIMIT 1", (collection,))
    return row.fetchone() is not None


def files_with_keys(conn: Any, collection: str, keys: Iterable[str]) -> list[str]:
    """Files of a collection whose lookup key is one of `keys`."""
    rows = conn.execute(
        "SELECT path FROM vault_files WHERE collection = ?"
        " AND key IN (SELECT value FROM json_each(?))",
        (collection, _array(keys)),
    )
    return [r[0] for r in rows]


def files_under(conn: Any, collection: str, folder: str) -> list[str]:
    """Files recorded at `folder` or under it (a folder that moved away)."""
    like = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
    rows = conn.execute(
        "SELECT path FROM vault_files WHERE collection = ?"
        " AND (path = ? OR path LIKE ? ESCAPE '\\')",
        (collection, folder, like),
    )
    return [r[0] for r in rows]


def add_file(conn: Any, collection: str, path: str, key: str) -> bool:
    """Record a file; False when it was already recorded."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO vault_files (collection, path, key) VALUES (?, ?, ?)",
        (collection, path, key),
    )
    return bool(cur.rowcount)


def add_files(conn: Any, collection: str, rows: Iterable[tuple[str, str]]) -> None:
    """Record many (path, key) files at once (a folder scan's new files)."""
    conn.executemany(
        "INSERT OR IGNORE INTO vault_files (collection, path, key) VALUES (?, ?, ?)",
        ((collection, path, key) for path, key in rows),
    )


def remove_file(conn: Any, collection: str, path: str) -> bool:
    """Forget a file; False when it was not recorded."""
    cur = conn.execute(
        "DELETE FROM vault_files WHERE collection = ? AND path = ?", (collection, path)
    )
    return bool(cur.rowcount)


def prune_files(conn: Any, collections: Iterable[str]) -> int:
    """Drop the file lists of collections no longer configured (removed or renamed)."""
    cur = conn.execute(
        "DELETE FROM vault_files WHERE collection NOT IN (SELECT value FROM json_each(?))",
        (_array(collections),),
    )
    return int(cur.rowcount)


def doc_paths(conn: Any, doc_ids: Iterable[int]) -> list[tuple[int, str, str]]:
    """(id, collection, path) of the given documents."""
    rows = conn.execute(
        "SELECT id, collection, path FROM documents WHERE id IN (SELECT value FROM json_each(?))",
        (_array(doc_ids),),
    )
    return [(r[0], r[1], r[2]) for r in rows]


def doc_ids_by_path(conn: Any, collection: str, paths: Iterable[str]) -> dict[str, int]:
    """Indexed documents among `paths` of a collection, path -> id."""
    rows = conn.execute(
        "SELECT path, id FROM documents WHERE collection = ?"
        " AND path IN (SELECT value FROM json_each(?))",
        (collection, _array(paths)),
    )
    return {r[0]: r[1] for r in rows}


def pending_links(conn: Any, collection: str) -> list[StoredLink]:
    """Links of a collection waiting to be (re-)resolved (`key` NULL), in id order."""
    return [
        StoredLink(*r) for r in conn.execute(_LINK + "l.key IS NULL ORDER BY l.id", (collection,))
    ]


def resolved_links(conn: Any, collection: str, doc_ids: Iterable[int] | None) -> list[StoredLink]:
    """Links of a collection already resolved (not pending): those written in the given notes,
    or all of them (None)."""
    if doc_ids is None:
        rows = conn.execute(_LINK + "l.key IS NOT NULL", (collection,))
    else:
        rows = conn.execute(
            _LINK + "l.key IS NOT NULL AND l.doc_id IN (SELECT value FROM json_each(?))",
            (collection, _array(doc_ids)),
        )
    return [StoredLink(*r) for r in rows]


def insert_links(conn: Any, doc_id: int, rows: Iterable[LinkRow]) -> None:
    """Store a note's links with their resolution; a NULL key marks a link to resolve once
    the update is done."""
    conn.executemany(
        "INSERT INTO links (doc_id, kind, target, heading, block, display, embed, line, key,"
        " resolved_path, resolved_doc_id, heading_ok, block_ok)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(doc_id, *row) for row in rows],
    )


def claim_links(conn: Any, collection: str, notes: Iterable[tuple[int, str, str]]) -> None:
    """Notes now live at these paths, (id, path, key) each: links already resolved to their
    files point at them; those asking for a heading or block go back to pending."""
    conn.execute(
        "UPDATE links SET resolved_doc_id = n.value ->> 0,"
        " key = CASE WHEN links.heading IS NULL AND links.block IS NULL THEN links.key END"
        " FROM json_each(?) AS n"
        " WHERE links.key = n.value ->> 2 AND links.resolved_path = n.value ->> 1"
        " AND +links.resolved_doc_id IS NOT n.value ->> 0"
        " AND (SELECT collection FROM documents WHERE id = links.doc_id) = ?",
        (json.dumps([list(n) for n in notes], ensure_ascii=False), collection),
    )


def mark_subpath_links_pending(conn: Any, doc_id: int) -> None:
    """A note changed: links to one of its headings or blocks must be checked again."""
    conn.execute(
        "UPDATE links SET key = NULL WHERE resolved_doc_id = ?"
        " AND (heading IS NOT NULL OR block IS NOT NULL)",
        (doc_id,),
    )


def mark_collection_pending(conn: Any, collection: str) -> None:
    """Every link of a collection must be resolved again (a forced update)."""
    conn.execute(
        "UPDATE links SET key = NULL"
        " WHERE doc_id IN (SELECT id FROM documents WHERE collection = ?)",
        (collection,),
    )


def mark_keys_pending(conn: Any, collection: str, keys: Iterable[str]) -> None:
    """Files with these lookup keys appeared or disappeared: the collection's links with such
    a key must be resolved again."""
    listed = _array(keys)
    if listed == "[]":
        return
    conn.execute(
        "UPDATE links SET key = NULL WHERE key IN (SELECT value FROM json_each(?))"
        " AND (SELECT collection FROM documents WHERE id = links.doc_id) = ?",
        (listed, collection),
    )


def set_resolutions(
    conn: Any,
    rows: Iterable[tuple[str | None, str | None, int | None, int | None, int | None, int]],
) -> None:
    """Store (key, resolved_path, resolved_doc_id, heading_ok, block_ok, link id) rows."""
    conn.executemany(
        "UPDATE links SET key = ?, resolved_path = ?, resolved_doc_id = ?, heading_ok = ?,"
        " block_ok = ? WHERE id = ?",
        rows,
    )


def headings_of(conn: Any, doc_ids: Iterable[int]) -> dict[int, list[tuple[int, str]]]:
    """(level, text) of each document's headings, in file order."""
    out: dict[int, list[tuple[int, str]]] = {}
    rows = conn.execute(
        "SELECT doc_id, level, text FROM headings"
        " WHERE doc_id IN (SELECT value FROM json_each(?)) ORDER BY doc_id, line",
        (_array(doc_ids),),
    )
    for doc_id, level, text in rows:
        out.setdefault(doc_id, []).append((level, text))
    return out


def blocks_of(conn: Any, doc_ids: Iterable[int]) -> dict[int, list[str]]:
    """Each document's `^block` ids."""
    out: dict[int, list[str]] = {}
    rows = conn.execute(
        "SELECT doc_id, block FROM blocks WHERE doc_id IN (SELECT value FROM json_each(?))",
        (_array(doc_ids),),
    )
    for doc_id, block in rows:
        out.setdefault(doc_id, []).append(block)
    return out


def pending_count(conn: Any) -> int:
    """Links never resolved (stored before resolution existed, or not yet processed)."""
    return int(conn.execute("SELECT count(*) FROM links WHERE key IS NULL").fetchone()[0])
