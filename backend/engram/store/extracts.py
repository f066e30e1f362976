"""The cache of text extracted from PDFs, by file hash and extractor (migration m019)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple


class Extract(NamedTuple):
    """A PDF's extracted text as cached: pages, outline (level, title, page), page count,
    metadata (key, value) and warnings."""

    pages: tuple[str, ...]
    outline: tuple[tuple[int, str, int], ...]
    page_count: int
    meta: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...]


def get(conn: Any, sha: str, extractor: str) -> Extract | None:
    """The cached extract of the file with this hash, None when there is none."""
    row = conn.execute(
        "SELECT pages, outline, page_count, meta, warnings FROM extracts"
        " WHERE hash = ? AND extractor = ?",
        (sha, extractor),
    ).fetchone()
    if row is None:
        return None
    return Extract(
        tuple(json.loads(row[0])),
        tuple((int(a), str(b), int(c)) for a, b, c in json.loads(row[1])),
        int(row[2]),
        tuple((str(k), str(v)) for k, v in json.loads(row[3])),
        tuple(json.loads(row[4])),
    )


def put(conn: Any, sha: str, extractor: str, extract: Extract) -> None:
    """Cache what the extractor made of the file with this hash."""
    conn.execute(
        "INSERT OR REPLACE INTO extracts"
        " (hash, extractor, pages, outline, page_count, meta, warnings)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            sha,
            extractor,
            json.dumps(list(extract.pages), ensure_ascii=False),
            json.dumps([list(o) for o in extract.outline], ensure_ascii=False),
            extract.page_count,
            json.dumps([list(m) for m in extract.meta], ensure_ascii=False),
            json.dumps(list(extract.warnings), ensure_ascii=False),
        ),
    )


def known(conn: Any, hashes: Sequence[str], extractor: str) -> set[str]:
    """Which of these file hashes have a cached extract."""
    out: set[str] = set()
    for i in range(0, len(hashes), 500):
        part = list(hashes[i : i + 500])
        marks = ",".join("?" * len(part))
        out.update(
            r[0]
            for r in conn.execute(
                f"SELECT hash FROM extracts WHERE extractor = ? AND hash IN ({marks})",
                (extractor, *part),
            )
        )
    return out


def delete_orphans(conn: Any) -> int:
    """Drop extracts of files no document holds any more (and of older extractors)."""
    cur = conn.execute("DELETE FROM extracts WHERE hash NOT IN (SELECT hash FROM documents)")
    return int(cur.rowcount)
