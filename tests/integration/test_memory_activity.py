"""Agent activity in daily notes, weekly reflections (and their use by wake and the handoff
context), and the observation archive, on a real vault with a settable clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.codec import encode
from engram.errors import InvalidInputError
from engram.service import Engram
from tests.integration.conftest import Clock

# the fixed clock starts on Thursday 2026-03-05, ISO week 2026-W10


def test_daily_notes_say_which_agents_stored_and_recalled(mem: Engram, vault: Path) -> None:
    mem.fact_add("We decided to roast on Tuesdays", created_by="agent-a")
    mem.fact_add("Kenji prefers light roasts", created_by="agent-b")
    mem.recall("roast", agent="agent-c")
    mem.recall("roast", agent="agent-c")
    mem.recall("roast")  # nobody named: not counted
    result = mem.daily("2026-03-05")
    text = (vault / result.path).read_text()
    assert "agents:\n- agent-a\n- agent-b\n- agent-c\n" in text
    section = text.split("## Session activity\n", 1)[1].split("<!--", 1)[0]
    assert section.splitlines() == [
        "- agent-a: 1 fact stored",
        "- agent-b: 1 fact stored",
        "- agent-c: 2 recalls",
    ]
    assert not mem.daily("2026-03-05").written  # same facts and recalls: nothing written


def test_a_reflection_gathers_the_week_and_regenerates_idempotently(
    mem: Engram, vault: Path, clock: Clock
) -> None:
    old = mem.fact_add("We decided to sell beans by subscription", created_by="agent-a")
    mem.fact_add("I will deliver the roast schedule by Friday", created_by="agent-b")
    mem.fact_supersede(old.id, "We decided to sell beans in bundles")
    mem.recall("beans bundles", agent="agent-a")
    mem.ledger_append("agent-b", [(1, {"role": "user", "text": "hello"})])
    clock.advance(days=7)  # the week after: W10 has ended
    done = mem.reflect()
    assert done.week == "2026-W10" and done.written and done.facts == 3
    path = vault / done.path
    assert done.path == "Engram/ledger/reflections/2026-W10.md"
    text = path.read_text()
    assert "week: 2026-W10\nweekStart: 2026-03-02\nweekEnd: 2026-03-08\n" in text
    assert "## Decisions\n" in text and "sell beans in bundles" in text
    opened = text.split("## Open commitments\n", 1)[1].split("\n## ", 1)[0]
    assert "roast schedule" in opened
    changed = text.split("## Superseded and contradicted\n", 1)[1].split("\n## ", 1)[0]
    assert "by subscription" in changed and "superseded" in changed
    recalled = text.split("## Most recalled\n", 1)[1].split("\n## ", 1)[0]
    assert "recalled 1 time" in recalled
    who = text.split("## Agent activity\n", 1)[1].split("\n## ", 1)[0]
    assert "- agent-a: 1 fact stored, 1 recall, 0 transcript lines" in who
    assert "- agent-b: 1 fact stored, 0 recalls, 1 transcript line" in who
    assert "[[Engram/daily/2026-03-05|Thu 2026-03-05]]" in text

    mine = text.replace("# Week 2026-W10\n", "# Week 2026-W10\n\nMy thoughts, kept.\n")
    path.write_text(mine)
    again = mem.reflect("2026-W10")
    assert not again.written and path.read_text() == mine  # same facts: not one byte written
    assert mem.reflections.due() is None  # it exists: the daemon leaves it

    woke = encode(mem.wake())
    assert woke["reflection"]["week"] == "2026-W10" and "bundles" in woke["reflection"]["text"]
    handoff = mem.memory_context(profile="handoff", budget=4000)
    assert "reflection" in [i.source for i in handoff.items]
    default = mem.memory_context(profile="default", budget=4000)
    assert "reflection" not in [i.source for i in default.items]


def test_the_daemon_check_writes_only_a_week_with_something_in_it(
    mem: Engram, vault: Path, clock: Clock
) -> None:
    clock.advance(days=7)
    assert mem.reflections.due() is None  # W10 had nothing
    assert not (vault / "Engram/ledger/reflections").exists()
    mem.fact_add("We decided to open on Sundays")
    clock.advance(days=7)
    done = mem.reflections.due()
    assert done is not None and done.week == "2026-W11" and done.written


@pytest.mark.parametrize("week", ["2025-W53", "W10", "2026-13", "next century", "x" * 200])
def test_bad_weeks_are_refused(mem: Engram, week: str) -> None:
    with pytest.raises(InvalidInputError):
        mem.reflect(week)


def test_old_observation_days_move_to_the_archive_and_stay_indexed(
    mem: Engram, vault: Path, clock: Clock
) -> None:
    fact = mem.fact_add("We decided to roast on Tuesdays")
    live = vault / "Engram/ledger/observations/2026/03/05.md"
    before = live.read_bytes()
    clock.advance(days=90)
    assert mem.ledger_archive() == []  # 90 days old: kept
    clock.advance(days=1)
    assert [m.source for m in mem.ledger_archive(dry_run=True)] == [
        "Engram/ledger/observations/2026/03/05.md"
    ]
    assert live.exists()
    (moved,) = mem.ledger_archive()
    assert moved.target == "Engram/ledger/archive/observations/2026/03/05.md"
    assert not live.exists() and (vault / moved.target).read_bytes() == before
    paths = {p for (p,) in mem.db.conn.execute("SELECT path FROM documents")}
    assert moved.target in paths and moved.source not in paths
    assert mem.fact_get(fact.id).id == fact.id  # the fact itself is not touched
    assert mem.ledger_archive() == []
