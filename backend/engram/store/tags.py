"""Tags as Obsidian compares them: case ignored, a nested tag inside each of its parents.

Each stored tag keeps its spelling (`tag`, for display) and its key (`key`): the tag lowercased,
without `#` or empty levels. Matching and counting go by the key; `tag:project` is the key
`project` or any key under `project/`, never `projects`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any


def tag_key(tag: str) -> str:
    """The form a tag is matched and counted by (`#Project//Alpha/` -> `project/alpha`):
    lowercased as Obsidian does (JavaScript's toLowerCase, not a full case fold)."""
    return "/".join(part for part in tag.lstrip("#").lower().split("/") if part)


def has_tag(doc_column: str) -> str:
    """SQL true when the document `doc_column` carries the tag or one nested under it;
    its parameters are `tag_params(tag)`."""
    # keys under `k/` sort between `k/` and `k0` ('0' follows '/'), whatever comes after
    return (
        f"EXISTS (SELECT 1 FROM tags t WHERE t.doc_id = {doc_column}"
        " AND (t.key = ? OR (t.key > ? AND t.key < ?)))"
    )


def tag_params(tag: str) -> tuple[str, str, str]:
    """The parameters of `has_tag` for one tag as a person typed it (`#Area`, `area/`)."""
    key = tag_key(tag)
    return (key, key + "/", key + "0")


def note_tags(conn: Any, collections: Sequence[str] = ()) -> list[tuple[int, str, str, int]]:
    """(document id, key, tag as written, first line) of each spelling of a tag in each note
    of the collections (all: empty), in path order: the first row of a spelling is the note
    where it is seen first."""
    where = f" WHERE d.collection IN ({','.join('?' * len(collections))})" if collections else ""
    rows = conn.execute(
        "SELECT t.doc_id, t.key, t.tag, min(t.line) AS first FROM tags t"
        " JOIN documents d ON d.id = t.doc_id" + where + " GROUP BY t.doc_id, t.tag"
        " ORDER BY d.collection, d.path, first, t.tag",
        tuple(collections),
    )
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def tags_under(conn: Any, collection: str, roots: Iterable[str]) -> list[tuple[int, str, str, int]]:
    """`note_tags`' rows of one collection for the tags whose first level is one of `roots`
    (keys): what their names (service/tags.spellings) are made from."""
    roots = sorted(set(roots))
    if not roots:
        return []
    rows = conn.execute(
        "SELECT t.doc_id, t.key, t.tag, min(t.line) AS first FROM tags t"
        " JOIN documents d ON d.id = t.doc_id"
        " WHERE d.collection = ? AND t.key IN (SELECT r.value FROM json_each(?) r"
        " UNION SELECT k.key FROM json_each(?) r JOIN tags k"
        " ON k.key > r.value || '/' AND k.key < r.value || '0')"
        " GROUP BY t.doc_id, t.tag ORDER BY d.path, first, t.tag",
        (collection, json.dumps(roots), json.dumps(roots)),
    )
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def doc_tags(conn: Any, collection: str, ids: Sequence[int] | None = None) -> list[tuple[int, str]]:
    """(document id, key) of each tag of the documents of a collection (those of `ids`)."""
    among = " AND t.doc_id IN (SELECT value FROM json_each(?))" if ids is not None else ""
    rows = conn.execute(
        "SELECT DISTINCT t.doc_id, t.key FROM tags t JOIN documents d ON d.id = t.doc_id"
        " WHERE d.collection = ?" + among,
        (collection, json.dumps(list(ids))) if ids is not None else (collection,),
    )
    return [(r[0], r[1]) for r in rows]
