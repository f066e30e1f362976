"""`engram rebuild` keeps what no note can give back: the sync bookkeeping, the hashes Engram
wrote (who edited a fact), access counts; sync carries on as if nothing happened."""

from __future__ import annotations

from typing import Any

from engram.service import Engram
from tests.integration.sync.conftest import Double, Machine, assert_converged
from tests.integration.sync.test_sync import edit, vault

KEPT = (
    "sync_state",
    "sync_outbox",
    "sync_meta",
    "sync_conflicts",
    "fact_access",
    "fact_written",
)


def kept_rows(eng: Engram) -> dict[str, list[tuple[Any, ...]]]:
    conn = eng.db.conn
    return {t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY 1")] for t in KEPT}


def editors(eng: Engram) -> dict[str, str]:
    return {r[0]: r[1] for r in eng.db.conn.execute("SELECT id, last_edited_by FROM facts")}


def test_rebuild_keeps_sync_bookkeeping_and_sync_carries_on(
    machine: Machine, double: Double
) -> None:
    a = machine("a")
    edited = a.fact_add("The API rate limit is 100 requests per minute.")
    gone = a.fact_add("Temporary: the VPN is down.")
    a.fact_add("Retro every second Friday.")
    assert a.sync_now().pushed == 3
    edit(a, a.fact_get(edited.id).path, "100 requests", "250 requests")  # queued, unsent
    a.recall("rate limit")  # access counts
    before, who = kept_rows(a), editors(a)
    assert who[edited.id] == "human" and before["sync_outbox"] and before["fact_access"]

    report = a.rebuild()
    assert kept_rows(a) == before and editors(a) == who
    assert report.carried["sync_state"] == 3 and report.deletes_queued == 0

    (vault(a) / a.fact_get(gone.id).path).unlink()  # deleted while nothing was indexing
    assert a.rebuild().deletes_queued == 1
    report = a.sync_now()
    assert report.error is None and (report.pushed, report.deleted) == (1, 1)
    assert double.facts()[gone.id]["deletedAt"] is not None
    assert "250 requests" in double.facts()[edited.id]["text"]
    assert a.sync_now().pushed == 0
    assert_converged(double, a)
