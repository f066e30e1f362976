"""Queries on Convex sync bookkeeping: per-fact agreed state, the outbox, cursors, conflicts.

The outbox holds at most one unsent upsert per fact: a later change replaces the payload of an
op that was never attempted. An op that was attempted keeps its op id and payload (the server
may have committed it), and a newer change queues after it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Agreed:
    """What both sides last agreed on for one fact."""

    fact_id: str
    version: int
    synced_hash: str
    base: dict[str, Any]
    path: str | None
    deleted: bool


@dataclass(frozen=True)
class Op:
    """One queued write to Convex."""

    seq: int
    vault: str
    fact_id: str
    kind: str  # upsert | delete
    op_id: str
    payload: dict[str, Any] | None
    hash: str | None
    attempts: int
    last_error: str | None
    parked: bool


def agreed(conn: Any, fact_id: str) -> Agreed | None:
    """The last agreed state of a fact, or None when it never synced."""
    row = conn.execute(
        "SELECT fact_id, version, synced_hash, base, path, deleted FROM sync_state"
        " WHERE fact_id = ?",
        (fact_id,),
    ).fetchone()
    if row is None:
        return None
    return Agreed(row[0], int(row[1]), row[2], json.loads(row[3]), row[4], bool(row[5]))


def set_agreed(
    conn: Any,
    vault: str,
    fact_id: str,
    version: int,
    synced_hash: str,
    base: dict[str, Any],
    path: str | None,
    deleted: bool,
    when: str,
) -> None:
    """Record what both sides now agree on."""
    conn.execute(
        "INSERT INTO sync_state (fact_id, vault, version, synced_hash, base, path, deleted,"
        " synced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fact_id) DO UPDATE SET"
        " vault = excluded.vault, version = excluded.version,"
        " synced_hash = excluded.synced_hash, base = excluded.base,"
        " path = coalesce(excluded.path, sync_state.path), deleted = excluded.deleted,"
        " synced_at = excluded.synced_at",
        (
            fact_id,
            vault,
            version,
            synced_hash,
            json.dumps(base, sort_keys=True),
            path,
            int(deleted),
            when,
        ),
    )


def enqueue_upsert(
    conn: Any, vault: str, fact_id: str, payload: dict[str, Any], digest: str, when: str
) -> bool:
    """Queue the fact's content unless it is what was last agreed or already queued;
    True when the outbox changed."""
    state = agreed(conn, fact_id)
    if state is not None and state.synced_hash == digest:
        # back to what both sides have: an unsent change is moot
        cur = conn.execute(
            "DELETE FROM sync_outbox WHERE fact_id = ? AND kind = 'upsert' AND attempts = 0"
            " AND parked = 0",
            (fact_id,),
        )
        return bool(cur.rowcount)
    last = conn.execute(
        "SELECT seq, kind, hash, attempts FROM sync_outbox WHERE fact_id = ? AND parked = 0"
        " ORDER BY seq DESC LIMIT 1",
        (fact_id,),
    ).fetchone()
    if last is not None and last[1] == "upsert" and last[2] == digest:
        return False
    text = json.dumps(payload, sort_keys=True)
    if last is not None and last[1] == "upsert" and last[3] == 0:
        conn.execute(
            "UPDATE sync_outbox SET payload = ?, hash = ?, created_at = ? WHERE seq = ?",
            (text, digest, when, last[0]),
        )
        return True
    conn.execute(
        "INSERT INTO sync_outbox (vault, fact_id, kind, op_id, payload, hash, created_at)"
        " VALUES (?, ?, 'upsert', ?, ?, ?, ?)",
        (vault, fact_id, uuid.uuid4().hex, text, digest, when),
    )
    return True


def pending(conn: Any, vault: str, limit: int = 100) -> list[Op]:
    """Unparked ops of a vault, oldest first."""
    rows = conn.execute(
        "SELECT * FROM sync_outbox WHERE vault = ? AND parked = 0 ORDER BY seq LIMIT ?",
        (vault, limit),
    )
    return [_op(r) for r in rows]


def parked(conn: Any, vault: str) -> list[Op]:
    """Ops Convex refused as invalid: shown to the user, never retried by themselves."""
    rows = conn.execute(
        "SELECT * FROM sync_outbox WHERE vault = ? AND parked = 1 ORDER BY seq", (vault,)
    )
    return [_op(r) for r in rows]


def has_pending(conn: Any, fact_id: str) -> bool:
    """True when an unparked op for the fact waits to be sent."""
    row = conn.execute(
        "SELECT 1 FROM sync_outbox WHERE fact_id = ? AND parked = 0 LIMIT 1", (fact_id,)
    ).fetchone()
    return row is not None


def in_flight(conn: Any, fact_id: str) -> bool:
    """True when an op for the fact was sent and its outcome is not known yet."""
    row = conn.execute(
        "SELECT 1 FROM sync_outbox WHERE fact_id = ? AND parked = 0 AND attempts > 0 LIMIT 1",
        (fact_id,),
    ).fetchone()
    return row is not None


def count_pending(conn: Any, vault: str) -> int:
    """How many ops wait to be sent."""
    row = conn.execute(
        "SELECT count(*) FROM sync_outbox WHERE vault = ? AND parked = 0", (vault,)
    ).fetchone()
    return int(row[0])


def attempted(conn: Any, seq: int) -> None:
    """Count a send attempt (its op id and payload are now fixed)."""
    conn.execute("UPDATE sync_outbox SET attempts = attempts + 1 WHERE seq = ?", (seq,))


def park(conn: Any, seq: int, error: str) -> None:
    """Stop retrying an op Convex refused; keep it to show."""
    conn.execute(
        "UPDATE sync_outbox SET parked = 1, attempts = attempts + 1, last_error = ? WHERE seq = ?",
        (error, seq),
    )


def done(conn: Any, seq: int) -> None:
    """Drop an op that went through, and parked ops of the same fact it made moot."""
    row = conn.execute("SELECT fact_id FROM sync_outbox WHERE seq = ?", (seq,)).fetchone()
    conn.execute("DELETE FROM sync_outbox WHERE seq = ?", (seq,))
    if row is not None:
        conn.execute(
            "DELETE FROM sync_outbox WHERE fact_id = ? AND parked = 1 AND seq < ?",
            (row[0], seq),
        )


def drop_unsent(conn: Any, fact_id: str) -> None:
    """Forget ops for a fact that were never sent (a merge replaces them)."""
    conn.execute(
        "DELETE FROM sync_outbox WHERE fact_id = ? AND attempts = 0 AND parked = 0", (fact_id,)
    )


def unsynced_facts(conn: Any, vault: str) -> list[Any]:
    """Fact notes of a vault that never synced and have nothing queued (facts made before
    sync was set up): their document rows."""
    return list(
        conn.execute(
            "SELECT f.id, f.last_edited_by, d.id AS doc_id, d.path, d.hash, d.frontmatter"
            " FROM facts f JOIN documents d ON d.id = f.doc_id WHERE d.collection = ?"
            " AND NOT EXISTS (SELECT 1 FROM sync_state s WHERE s.fact_id = f.id)"
            " AND NOT EXISTS (SELECT 1 FROM sync_outbox o WHERE o.fact_id = f.id)",
            (vault,),
        )
    )


def cursor(conn: Any, vault: str) -> str | None:
    """Where the last pull stopped."""
    row = conn.execute("SELECT cursor FROM sync_meta WHERE vault = ?", (vault,)).fetchone()
    return None if row is None else row[0]


def set_cursor(conn: Any, vault: str, value: str | None) -> None:
    """Remember where the pull stopped."""
    conn.execute(
        "INSERT INTO sync_meta (vault, cursor) VALUES (?, ?)"
        " ON CONFLICT (vault) DO UPDATE SET cursor = excluded.cursor",
        (vault, value),
    )


def meta(conn: Any, vault: str) -> dict[str, Any]:
    """cursor, last_sync, last_error and stopped (why the last pull ended early) of a vault."""
    row = conn.execute(
        "SELECT cursor, last_sync, last_error, stopped FROM sync_meta WHERE vault = ?", (vault,)
    ).fetchone()
    keys = ("cursor", "last_sync", "last_error", "stopped")
    return dict(zip(keys, row, strict=True)) if row else dict.fromkeys(keys)


def finish(
    conn: Any, vault: str, when: str | None, error: str | None, stopped: str | None = None
) -> None:
    """Record the end of a sync run (`when` only after a run that reached Convex; `stopped`:
    why its pull ended before Convex said it was done)."""
    conn.execute(
        "INSERT INTO sync_meta (vault, last_sync, last_error, stopped) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (vault) DO UPDATE SET"
        " last_sync = coalesce(excluded.last_sync, sync_meta.last_sync),"
        " last_error = excluded.last_error, stopped = excluded.stopped",
        (vault, when, error, stopped),
    )


def add_conflict(
    conn: Any, vault: str, fact_id: str, path: str, copy: str, fields: list[str], when: str
) -> None:
    """Remember a conflict copy written by sync."""
    conn.execute(
        "INSERT INTO sync_conflicts (vault, fact_id, path, copy, fields, at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (vault, fact_id, path, copy, json.dumps(fields), when),
    )


def conflicts(conn: Any, vault: str, limit: int = 50) -> list[dict[str, Any]]:
    """Conflict copies sync wrote, newest first."""
    rows = conn.execute(
        "SELECT fact_id, path, copy, fields, at FROM sync_conflicts WHERE vault = ?"
        " ORDER BY id DESC LIMIT ?",
        (vault, limit),
    )
    return [
        {"factId": r[0], "path": r[1], "copy": r[2], "fields": json.loads(r[3]), "at": r[4]}
        for r in rows
    ]


def _op(row: Any) -> Op:
    return Op(
        seq=int(row["seq"]),
        vault=str(row["vault"]),
        fact_id=str(row["fact_id"]),
        kind=str(row["kind"]),
        op_id=str(row["op_id"]),
        payload=json.loads(row["payload"]) if row["payload"] else None,
        hash=row["hash"],
        attempts=int(row["attempts"]),
        last_error=row["last_error"],
        parked=bool(row["parked"]),
    )


def forget(conn: Any, fact_id: str) -> None:
    """Forget what was agreed for a fact (Convex no longer has it)."""
    conn.execute("DELETE FROM sync_state WHERE fact_id = ?", (fact_id,))


def conflict_copies(conn: Any, fact_id: str) -> list[str]:
    """Conflict copies sync wrote for a fact (they may have been deleted since)."""
    rows = conn.execute("SELECT copy FROM sync_conflicts WHERE fact_id = ?", (fact_id,))
    return [r[0] for r in rows]
