"""Follow-ups of fact writes still to be done (service/memory_follow.py says when and why)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Pending:
    """One fact whose follow-ups are not done: the notes to index, the hash Engram wrote to
    its note, the process doing them (None: nobody, any process may)."""

    fact_id: str
    collection: str
    paths: tuple[str, ...]
    sha256: str | None
    pid: int | None
    since: str


def intend(
    conn: Any,
    collection: str,
    items: Iterable[tuple[str, tuple[str, ...], str | None]],
    pid: int | None,
    since: str,
) -> None:
    """Record (fact id, paths, hash) as pending for `pid`; a fact already pending keeps the
    paths it had as well."""
    conn.executemany(
        "INSERT INTO fact_followups (fact_id, collection, paths, sha256, pid, since)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (fact_id) DO UPDATE SET"
        " collection = excluded.collection, sha256 = excluded.sha256, pid = excluded.pid,"
        " since = excluded.since, paths = (SELECT json_group_array(value) FROM"
        " (SELECT value FROM json_each(fact_followups.paths)"
        " UNION SELECT value FROM json_each(excluded.paths)))",
        [(fid, collection, json.dumps(list(paths)), sha, pid, since) for fid, paths, sha in items],
    )


def done(conn: Any, fact_ids: Iterable[str]) -> None:
    """Forget the follow-ups of these facts: they are done (or there is nothing to do)."""
    conn.executemany("DELETE FROM fact_followups WHERE fact_id = ?", [(f,) for f in fact_ids])


def release(conn: Any, fact_ids: Iterable[str]) -> None:
    """Leave these facts' follow-ups to whichever process comes next."""
    conn.executemany(
        "UPDATE fact_followups SET pid = NULL WHERE fact_id = ?", [(f,) for f in fact_ids]
    )


def pending(conn: Any, collection: str | None = None) -> list[Pending]:
    """Every pending follow-up (of one vault), oldest first."""
    sql = "SELECT fact_id, collection, paths, sha256, pid, since FROM fact_followups"
    params: tuple[str, ...] = ()
    if collection is not None:
        sql, params = sql + " WHERE collection = ?", (collection,)
    rows = conn.execute(sql + " ORDER BY since, fact_id", params).fetchall()
    return [Pending(r[0], r[1], tuple(json.loads(r[2])), r[3], r[4], r[5]) for r in rows]
