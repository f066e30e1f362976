"""Queueing a fact for Convex, in the same transaction that indexes its note."""

from __future__ import annotations

from typing import Any

from engram.memory.model import Fact, iso, utc_now
from engram.store import sync as sync_store
from engram.sync.payload import content_hash, payload_of


def queue_fact(conn: Any, vault: str, fact: Fact, edited_by: str | None = None) -> bool:
    """Queue the fact's current content unless Convex already has it; True if queued."""
    payload = payload_of(fact, edited_by)
    return sync_store.enqueue_upsert(
        conn, vault, fact.id, payload, content_hash(payload), iso(utc_now())
    )
