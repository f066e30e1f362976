"""Queries on remote changes sync could not apply: kept with why, shown by `sync status`.

A change Convex sends that cannot become a note here (an id that cannot be a file name, a
field of the wrong type) is kept aside and the pull moves past it; the same record sent again
is kept once, and only the newest are kept, so a deployment cannot fill the index this way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def add(
    conn: Any, vault: str, shown_id: str, reason: str, record: str, digest: str, when: str
) -> None:
    """Keep a change that was not applied (`record` is its JSON, `digest` its hash)."""
    conn.execute(
        "INSERT INTO sync_rejected (vault, external_id, reason, record, digest, at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (vault, digest) DO UPDATE SET"
        " reason = excluded.reason, at = excluded.at",
        (vault, shown_id, reason, record, digest, when),
    )


def prune(conn: Any, vault: str, keep: int) -> None:
    """Forget all but the `keep` newest kept changes of a vault."""
    conn.execute(
        "DELETE FROM sync_rejected WHERE vault = ? AND id NOT IN"
        " (SELECT id FROM sync_rejected WHERE vault = ? ORDER BY id DESC LIMIT ?)",
        (vault, vault, keep),
    )


def clear(conn: Any, vault: str, fact_ids: Iterable[str]) -> None:
    """Forget kept changes of facts that have since been applied (a later version was good)."""
    conn.executemany(
        "DELETE FROM sync_rejected WHERE vault = ? AND external_id = ?",
        [(vault, fid) for fid in fact_ids],
    )


def listed(conn: Any, vault: str, limit: int = 50) -> list[dict[str, Any]]:
    """Kept changes, newest first: externalId (as shown), reason and when."""
    rows = conn.execute(
        "SELECT external_id, reason, at FROM sync_rejected WHERE vault = ?"
        " ORDER BY id DESC LIMIT ?",
        (vault, limit),
    )
    return [{"externalId": r[0], "reason": r[1], "at": r[2]} for r in rows]
