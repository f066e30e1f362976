"""Agent activity the notes do not hold: recalls per vault, UTC day and agent."""

from __future__ import annotations

from typing import Any


def record_recall(conn: Any, collection: str, day: str, agent: str) -> None:
    """Count one recall by `agent` on `day` (YYYY-MM-DD)."""
    conn.execute(
        "INSERT INTO recall_log (collection, day, agent, recalls) VALUES (?, ?, ?, 1)"
        " ON CONFLICT (collection, day, agent) DO UPDATE SET recalls = recalls + 1",
        (collection, day, agent),
    )


def recalls(conn: Any, collection: str, since: str, until: str) -> dict[str, int]:
    """Recalls per agent over the days [since, until) (YYYY-MM-DD)."""
    rows = conn.execute(
        "SELECT agent, sum(recalls) FROM recall_log WHERE collection = ? AND day >= ?"
        " AND day < ? GROUP BY agent ORDER BY agent",
        (collection, since, until),
    )
    return {r[0]: int(r[1]) for r in rows}


def most_accessed(
    conn: Any, collection: str, since: str, until: str, limit: int
) -> list[tuple[str, int]]:
    """(fact id, times recalled in all) of the facts last recalled in [since, until) (ISO
    times), most recalled first."""
    rows = conn.execute(
        "SELECT a.id, a.access_count FROM fact_access a JOIN facts f ON f.id = a.id"
        " JOIN documents d ON d.id = f.doc_id WHERE d.collection = ? AND a.access_count > 0"
        " AND a.last_access >= ? AND a.last_access < ?"
        " ORDER BY a.access_count DESC, a.id LIMIT ?",
        (collection, since, until, limit),
    )
    return [(r[0], int(r[1])) for r in rows]
