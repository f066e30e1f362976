"""Convex sync end to end: two machines and the double, edits on every side, faults."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from engram.codec import encode
from engram.errors import UnavailableError
from engram.service import Engram
from tests.integration.sync.conftest import (
    SYNC_TOKEN,
    Double,
    Machine,
    assert_converged,
    local_payloads,
)


def vault(eng: Engram) -> Path:
    return eng.memory.vault("vault").root


def edit(eng: Engram, rel: str, old: str, new: str) -> None:
    """A person edits a note in Obsidian, then the watcher (here: update) indexes it."""
    path = vault(eng) / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    eng.update(["vault"])


def remote_fact(fid: str, text: str, **fields: object) -> dict[str, object]:
    """A fact as another machine sends it."""
    return {
        "externalId": fid,
        "title": text.split(".")[0],
        "text": text,
        "factType": "observation",
        "timestamp": "2026-11-20T10:00:00Z",
        "lifecycleState": "active",
        **fields,
    }


def test_facts_travel_between_machines_and_a_second_run_does_nothing(
    machine: Machine, double: Double
) -> None:
    a, b = machine("a"), machine("b")
    first = a.fact_add("We decided to ship the ledger on Postgres.", tags=["db"])
    second = a.fact_add("Ana prefers async reviews.", fact_type="preference")
    assert a.fact_get(first.id).sync_state == "pending"
    report = a.sync_now()
    assert report.error is None and report.pushed == 2
    assert a.fact_get(first.id).sync_state == "synced"
    report = b.sync_now()
    assert report.created == 2 and report.pushed == 0
    got = b.fact_get(second.id)
    assert got.path.startswith("Engram/preferences/") and got.text == "Ana prefers async reviews."
    assert (vault(b) / got.path).exists()
    assert_converged(double, a, b)
    double.control("DELETE", "log")
    assert a.sync_now().pushed == 0 and b.sync_now().pushed == 0
    writes = [r for r in double.log() if r["route"] == "mutation"]
    assert writes == []  # nothing echoed back and forth


def test_facts_made_before_sync_was_set_up_are_pushed(machine: Machine, double: Double) -> None:
    a = machine("a")
    a.fact_add("Backups run at 02:00 UTC.")
    status = encode(a.sync_status("vault"))
    assert status["configured"] and status["pending"] == 1
    b = machine("b")  # sync set up on a vault that already holds a fact note
    b.fact_add("The staging database is ephemeral.")
    with b.db.write() as conn:
        conn.execute("DELETE FROM sync_outbox")  # as if it predates sync
    assert b.sync_now().pushed == 1
    assert a.sync_now().created == 1 and b.sync_now().created == 1
    assert_converged(double, a, b)


def test_a_human_edit_is_pushed_and_wins_over_an_unchanged_remote(
    machine: Machine, double: Double
) -> None:
    a, b = machine("a"), machine("b")
    fact = a.fact_add("The API rate limit is 100 requests per minute.")
    a.sync_now(), b.sync_now()
    rel = b.fact_get(fact.id).path
    edit(b, rel, "100 requests", "250 requests")
    assert b.fact_get(fact.id).last_edited_by == "human"
    assert b.sync_now().pushed == 1
    assert a.sync_now().updated == 1
    got = a.fact_get(fact.id)
    assert "250 requests" in got.text and got.last_edited_by == "human"
    assert double.facts()[fact.id]["version"] == 2
    assert_converged(double, a, b)


def test_edits_on_both_sides_to_different_lines_merge(machine: Machine, double: Double) -> None:
    a, b = machine("a"), machine("b")
    fact = a.fact_add("Deploy checklist.\n\nStep one: tag.\n\nStep two: build.", tags=["ops"])
    a.sync_now(), b.sync_now()
    edit(a, a.fact_get(fact.id).path, "Step one: tag.", "Step one: tag and sign.")
    a.fact_update(fact.id, tags=["ops", "release"])
    edit(b, b.fact_get(fact.id).path, "Step two: build.", "Step two: build twice.")
    a.sync_now()
    report = b.sync_now()  # b's push meets a's version: merged, then pushed
    assert report.merged == 1 and report.conflicts == 0
    a.sync_now()
    merged = a.fact_get(fact.id)
    assert "tag and sign" in merged.text and "build twice" in merged.text
    assert merged.tags == ("ops", "release")
    live = assert_converged(double, a, b)
    assert live[fact.id]["text"] == merged.text
    assert not list(vault(b).rglob("*(conflict*"))


def test_the_same_line_edited_on_both_sides_keeps_both_versions(
    machine: Machine, double: Double
) -> None:
    a, b = machine("a"), machine("b")
    fact = a.fact_add("The office opens at 9.")
    a.sync_now(), b.sync_now()
    edit(a, a.fact_get(fact.id).path, "opens at 9", "opens at 8")
    edit(b, b.fact_get(fact.id).path, "opens at 9", "opens at 10")
    a.sync_now()
    report = b.sync_now()
    assert report.conflicts == 1
    note = b.fact_get(fact.id)
    assert "opens at 8" in note.text  # Convex's version, everywhere
    copies = list(vault(b).rglob("*(conflict*"))
    assert len(copies) == 1 and "opens at 10" in copies[0].read_text()  # b's words kept
    assert note.sync_state == "conflict"
    status = encode(b.sync_status("vault"))
    assert status["conflicts"][0]["fields"] == ["title", "text"]
    assert status["conflicts"][0]["copy"] == copies[0].relative_to(vault(b)).as_posix()
    a.sync_now()
    assert_converged(double, a, b)
    assert local_payloads(b)[fact.id]["text"] == "The office opens at 8."  # copy is no fact


def test_a_tombstone_archives_the_note_and_a_deleted_note_tombstones(
    machine: Machine, double: Double
) -> None:
    a, b = machine("a"), machine("b")
    keep = a.fact_add("Retro every second Friday.")
    gone = a.fact_add("Temporary: the VPN is down.")
    a.sync_now(), b.sync_now()
    double.run("facts:softDelete", {"opId": "other-1", "externalId": keep.id})
    assert a.sync_now().archived == 1
    archived = a.fact_get(keep.id)
    assert archived.lifecycle == "archived" and (vault(a) / archived.path).exists()
    (vault(b) / b.fact_get(gone.id).path).unlink()  # a person deletes a fact note
    b.update(["vault"])
    report = b.sync_now()
    assert report.deleted == 1 and report.archived == 1
    assert double.facts()[gone.id]["deletedAt"] is not None
    assert a.sync_now().archived == 1
    assert a.fact_get(gone.id).lifecycle == "archived"
    assert double.facts()[keep.id]["version"] == 2  # archiving did not push it back to life
    assert_converged(double, a, b)


def test_a_moved_note_is_not_deleted(machine: Machine, double: Double) -> None:
    a = machine("a")
    fact = a.fact_add("Moved facts stay facts.")
    a.sync_now()
    src = vault(a) / a.fact_get(fact.id).path
    dst = vault(a) / "Elsewhere" / src.name
    dst.parent.mkdir()
    src.rename(dst)
    a.update(["vault"])
    a.sync_now()
    assert double.facts()[fact.id].get("deletedAt") is None
    assert_converged(double, a)


def test_remote_changes_to_type_move_the_note(machine: Machine, double: Double) -> None:
    a = machine("a")
    fact = a.fact_add("Use feature flags for risky changes.", fact_type="observation")
    a.sync_now()
    remote = double.facts()[fact.id]
    changed = {k: remote[k] for k in ("externalId", "title", "text", "timestamp", "tags")}
    changed |= {"factType": "decision", "lifecycleState": "active", "importanceScore": 0.9}
    double.run("facts:upsert", {"opId": "other-2", "fact": changed})
    assert a.sync_now().updated == 1
    got = a.fact_get(fact.id)
    assert got.path.startswith("Engram/decisions/") and got.importance == 0.9
    assert not (vault(a) / fact.path).exists()
    assert_converged(double, a)


def listening_again(double: Double) -> None:
    """Wait for the double to take connections again: its `down` window runs on its own
    clock, which a loaded machine may run late."""
    deadline = time.monotonic() + 30
    while True:
        try:
            double.control("GET", "faults")
            return
        except OSError:
            assert time.monotonic() < deadline, "the double never listened again"
            time.sleep(0.05)


def test_offline_keeps_the_outbox_and_the_next_run_delivers(
    machine: Machine, double: Double
) -> None:
    a = machine("a")
    fact = a.fact_add("Write the incident review by Friday.")
    double.fault(kind="down", ms=3000)
    report = a.sync_now()
    assert report.error and "cannot reach Convex" in report.error
    status = encode(a.sync_status("vault"))
    assert status["pending"] == 1 and status["state"] == "error"
    assert status["lastError"] == report.error and status["lastSync"] is None
    listening_again(double)
    report = a.sync_now()
    assert report.error is None and report.pushed == 1
    assert encode(a.sync_status("vault"))["state"] == "idle"
    assert double.facts()[fact.id]["version"] == 1
    assert_converged(double, a)


@pytest.mark.parametrize(
    "fault",
    [
        {"kind": "delay", "ms": 2500},  # past the 2 s timeout; the write still commits
        {"kind": "commit_then_drop"},
        {"kind": "close"},
        {"kind": "status", "status": 503, "retryAfter": 0.2},
        {"kind": "status", "status": 429, "retryAfter": 0.2},
        {"kind": "html_500"},
        {"kind": "paused"},
    ],
    ids=lambda f: f["kind"] + str(f.get("status", "")),
)
def test_a_lost_or_refused_write_is_retried_once_and_never_doubled(
    machine: Machine, double: Double, fault: dict[str, object]
) -> None:
    a, b = machine("a"), machine("b")
    fact = a.fact_add("Rotate the signing keys every quarter.")
    double.fault(**fault, path="facts:upsert")
    report = a.sync_now()
    assert report.error is None and report.retries >= 1 and report.pushed == 1
    stored = double.facts()
    assert list(stored) == [fact.id] and stored[fact.id]["version"] == 1
    sent = [r for r in double.log() if r["path"] == "facts:upsert"]
    assert len({r["args"]["opId"] for r in sent}) == 1  # every retry carried the same op id
    b.sync_now()
    assert_converged(double, a, b)


def test_retry_after_is_honoured(machine: Machine, double: Double) -> None:
    a = machine("a")
    a.fact_add("Retry-After is a number of seconds.")
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    engine = a.sync_engine("vault")
    engine.client.sleep = sleep
    double.fault(kind="status", status=429, retryAfter=7, path="facts:upsert")
    report = asyncio.run(engine.run())
    assert report.pushed == 1 and slept == [7.0]


def test_an_invalid_fact_is_parked_and_shown_not_retried(machine: Machine, double: Double) -> None:
    a = machine("a")
    bad = a.fact_add("A fact with a very long scope.", scope="x" * 1500)
    good = a.fact_add("A fine fact.")
    report = a.sync_now()
    assert report.parked == 1 and report.pushed == 1 and report.error is None
    status = encode(a.sync_status("vault"))
    assert status["pending"] == 0
    assert status["parked"][0]["factId"] == bad.id and "scope" in status["parked"][0]["error"]
    assert set(double.facts()) == {good.id}
    double.control("DELETE", "log")
    a.sync_now()
    assert not [r for r in double.log() if r["path"] == "facts:upsert"]  # not retried
    a.fact_update(bad.id, scope="team")  # fixing the fact sends it and clears the parked op
    assert a.sync_now().pushed == 1
    assert encode(a.sync_status("vault"))["parked"] == []
    assert_converged(double, a)


def test_a_concurrent_writer_between_pull_and_push_is_merged(
    machine: Machine, double: Double
) -> None:
    a = machine("a")
    fact = a.fact_add("Standup at 10.\n\nNotes go in the team channel.")
    a.sync_now()
    remote = double.facts()[fact.id]
    theirs = {k: remote[k] for k in ("externalId", "title", "timestamp", "factType")}
    theirs |= {"text": "Standup at 10.\n\nNotes go in the wiki.", "lifecycleState": "active"}
    edit(a, a.fact_get(fact.id).path, "Standup at 10.", "Standup at 9:30.")
    double.fault(
        kind="write_before",
        path="facts:upsert",
        write={"path": "facts:upsert", "args": {"opId": "other-3", "fact": theirs}},
    )
    report = a.sync_now()
    assert report.merged == 1 and report.error is None
    got = a.fact_get(fact.id)
    assert got.text == "Standup at 9:30.\n\nNotes go in the wiki."
    assert_converged(double, a)


def test_a_person_saving_while_sync_writes_the_note_loses_nothing(
    machine: Machine, double: Double, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = machine("a"), machine("b")
    fact = a.fact_add("Lunch is at noon.\n\nBring your own cup.")
    a.sync_now(), b.sync_now()
    edit(a, a.fact_get(fact.id).path, "Lunch is at noon.", "Lunch is at 12:30.")
    a.sync_now()
    rel = b.fact_get(fact.id).path
    from engram.vault import journal

    real = journal.commit
    raced = []

    def person_saves_first(root: Path, changes: list[journal.Change], label: str) -> None:
        path = root / changes[0].path
        if not raced and path.name == Path(rel).name:
            raced.append(path)
            old = path.read_text(encoding="utf-8")
            path.write_text(old.replace("Bring your own cup.", "Bring a mug."), "utf-8")
        real(root, changes, label)

    monkeypatch.setattr(journal, "commit", person_saves_first)
    b.sync_now()
    assert raced
    b.update(["vault"])
    b.sync_now(), a.sync_now()
    got = b.fact_get(fact.id)
    assert got.text == "Lunch is at 12:30.\n\nBring a mug."  # both edits, merged
    assert_converged(double, a, b)


def test_wrong_credentials_are_caught_at_init_and_reported_by_sync(
    machine: Machine, double: Double
) -> None:
    a = machine("a")
    with pytest.raises(UnavailableError, match="wrong sync token"):
        a.sync_init(double.url, "not-the-token")
    a.sync_init(double.url, "not-the-token", check=False)
    a.fact_add("This fact waits for a token.")
    report = a.sync_now()
    assert report.error and "wrong sync token" in report.error and "sync init" in report.hint
    assert encode(a.sync_status("vault"))["pending"] == 1
    assert SYNC_TOKEN not in str(encode(report)) and SYNC_TOKEN not in str(encode(a.sync_status()))


def test_deep_search_fuses_convex_and_local_by_fact_id(machine: Machine, double: Double) -> None:
    a = machine("a")
    here = a.fact_add("The espresso machine needs descaling monthly.")
    a.sync_now()
    double.run(
        "facts:upsert",
        {"opId": "other-4", "fact": remote_fact("f" * 32, "Espresso beans come from Lisbon.")},
    )
    found = a.deep_search("espresso", n=5, vault="vault")
    assert found.sources == ("local", "convex") and found.notes == ()
    by_id = {h.hit.fact.id: h for h in found.hits if h.hit.fact is not None}
    assert by_id[here.id].source == "both"
    assert by_id["f" * 32].source == "convex" and by_id["f" * 32].hit.path == ""
    assert len([h for h in found.hits if h.hit.fact and h.hit.fact.id == here.id]) == 1
    double.fault(kind="down", ms=1500)
    offline = a.deep_search("espresso", n=5, vault="vault")
    assert offline.sources == ("local",) and "Convex did not answer" in offline.notes[0]


def test_a_fact_deleted_before_its_first_push_is_tombstoned_not_left_live(
    machine: Machine, double: Double
) -> None:
    a = machine("a")
    fact = a.fact_add("A fact a person deletes at once.")
    (vault(a) / a.fact_get(fact.id).path).unlink()
    a.update(["vault"])
    a.sync_now()
    assert double.facts()[fact.id]["deletedAt"] is not None
    assert_converged(double, a)


def _unconfirmed_edit(a: Engram, double: Double, fact_id: str) -> None:
    """A human edit whose push commits in Convex but whose every reply is lost."""
    edit(a, a.fact_get(fact_id).path, "ten", "eleven")
    double.fault(kind="commit_then_drop", count=10, path="facts:upsert")
    assert a.sync_now().error is not None
    double.control("DELETE", "faults")
    assert double.facts()[fact_id]["version"] == 2  # committed, though we do not know it


def test_a_revert_while_a_write_is_unconfirmed_is_still_sent(
    machine: Machine, double: Double
) -> None:
    a = machine("a")
    fact = a.fact_add("The queue holds ten jobs.")
    a.sync_now()
    _unconfirmed_edit(a, double, fact.id)
    edit(a, a.fact_get(fact.id).path, "eleven", "ten")  # the person changes their mind
    a.sync_now()
    assert "ten jobs" in double.facts()[fact.id]["text"]
    assert_converged(double, a)


def test_a_pull_waits_behind_an_unconfirmed_write(machine: Machine, double: Double) -> None:
    a, b = machine("a"), machine("b")
    fact = a.fact_add("The queue holds ten jobs.\n\nWorkers: two.")
    a.sync_now(), b.sync_now()
    _unconfirmed_edit(a, double, fact.id)
    edit(b, b.fact_get(fact.id).path, "Workers: two.", "Workers: four.")
    b.sync_now()
    report = a.sync_now(push=False)
    assert report.deferred == 1 and report.updated == 0
    a.sync_now(), b.sync_now()
    assert a.fact_get(fact.id).text == "The queue holds eleven jobs.\n\nWorkers: four."
    assert_converged(double, a, b)


def test_a_large_backlog_goes_out_in_one_run(machine: Machine, double: Double) -> None:
    a = machine("a")
    folder = vault(a) / "Engram" / "observations"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(260):  # more than the outbox reads at once, many times over
        fid = f"{i:032x}"
        (folder / f"note-{i}-{fid[:8]}.md").write_text(
            f"---\nid: {fid}\nfactType: observation\n---\n\nBacklog fact number {i}.\n"
        )
    a.update(["vault"])
    report = a.sync_now()
    assert report.pushed == 260 and report.notes == []
    assert len(double.facts()) == 260
    assert_converged(double, a)
