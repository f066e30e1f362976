"""The model-output cache: a repeated query costs no model calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def get_many(conn: Any, kind: str, keys: Sequence[str]) -> dict[str, str]:
    """Cached values for the keys that have one."""
    out: dict[str, str] = {}
    for i in range(0, len(keys), 500):
        part = list(keys[i : i + 500])
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT key, value FROM llm_cache WHERE kind = ? AND key IN ({marks})", [kind, *part]
        )
        out.update((r[0], r[1]) for r in rows)
    return out


def put_many(conn: Any, kind: str, items: Sequence[tuple[str, str]]) -> None:
    """Store (key, value) pairs."""
    conn.executemany(
        "INSERT OR REPLACE INTO llm_cache (kind, key, value) VALUES (?, ?, ?)",
        [(kind, k, v) for k, v in items],
    )


def clear(conn: Any) -> int:
    """Forget every cached model output; return how many."""
    return int(conn.execute("DELETE FROM llm_cache").rowcount)
