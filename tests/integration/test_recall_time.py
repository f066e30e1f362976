"""Recall that understands time: "what did we decide last week" on a stopped clock."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from engram.memory import ranking
from engram.service import Engram
from tests.conftest import EngramCli

NOW = dt.datetime(2026, 3, 5, 9, 30, tzinfo=dt.UTC)  # a Thursday; last week: Feb 23 - Mar 1


def at(clock: Any, when: str) -> None:
    clock.now = dt.datetime.fromisoformat(when)


def test_what_did_we_decide_last_week(mem: Engram, clock: Any) -> None:
    mem.zone = dt.UTC
    at(clock, "2026-02-18T10:00:00+00:00")
    mem.fact_add("We decided to switch roasters to Casa Tostado.", fact_type="decision")
    at(clock, "2026-02-24T10:00:00+00:00")
    price = mem.fact_add("We decided to price the subscription at 18 euros.", fact_type="decision")
    at(clock, "2026-02-26T10:00:00+00:00")
    mem.fact_add("The grinder is noisy in the mornings.", fact_type="observation")
    at(clock, "2026-02-27T16:00:00+00:00")
    hire = mem.fact_add("Decided to hire a second barista for weekends.", fact_type="decision")
    at(clock, "2026-03-03T10:00:00+00:00")
    mem.fact_add("We decided to open on Sundays.", fact_type="decision")
    clock.now = NOW

    found = mem.recall("what did we decide last week")
    assert sorted(h.fact.id for h in found.results if h.fact) == sorted([price.id, hire.id])
    assert found.window is not None and found.fact_type == "decision" and found.searched == ""
    assert (found.window.since, found.window.until) == (dt.date(2026, 2, 23), dt.date(2026, 3, 2))
    assert found.window.phrases == ("last week",)
    assert found.window.label == "2026-02-23 to 2026-03-01"
    for hit in found.results:  # age counts from the window's end, not from today
        assert hit.fact is not None
        end = dt.datetime(2026, 3, 2, tzinfo=dt.UTC)
        assert hit.recency == pytest.approx(
            ranking.recency(ranking.age_days(hit.fact.changed_at, end), 30)
        )

    about = mem.recall("what did we decide about pricing last week")
    assert [h.fact.id for h in about.results if h.fact] == [price.id]
    assert about.searched == "pricing"
    german = mem.recall("was haben wir letzte Woche entschieden")
    assert sorted(h.fact.id for h in german.results if h.fact) == sorted([price.id, hire.id])
    literal = mem.recall("what did we decide last week", literal=True)
    assert literal.window is None and literal.fact_type is None
    assert literal.searched == "what did we decide last week"
    noisy = mem.recall("grinder last week")  # no question: every type, within the week
    assert [h.fact.text for h in noisy.results if h.fact] == [
        "The grinder is noisy in the mornings."
    ]
    assert mem.recall("grinder this week").results == ()


def test_days_are_the_local_calendars(mem: Engram, clock: Any) -> None:
    """Sunday 22:00 in New York is Monday 03:00 UTC: for a New Yorker it was last week."""
    at(clock, "2026-03-02T03:00:00+00:00")
    late = mem.fact_add("We decided to close early on Sundays.", fact_type="decision")
    clock.now = NOW
    mem.zone = dt.timezone(dt.timedelta(hours=-5))
    assert [h.fact.id for h in mem.recall("what did we decide last week").results if h.fact] == [
        late.id
    ]
    mem.zone = dt.UTC
    assert mem.recall("what did we decide last week").results == ()
    assert [h.fact.id for h in mem.recall("what did we decide this week").results if h.fact] == [
        late.id
    ]


def test_the_cli_reads_time_words_on_the_test_clock(
    run: EngramCli, xdg: dict[str, str], vault: Path
) -> None:
    env = {**xdg, "NO_COLOR": "1"}
    run.json(env, "init", str(vault))
    older = {**env, "ENGRAM_TEST_NOW": "2026-02-24T10:00:00+01:00"}
    kept = run.json(older, "fact", "add", "We decided to roast on Tuesdays.", "--type", "decision")
    newer = {**env, "ENGRAM_TEST_NOW": "2026-03-03T10:00:00+01:00"}
    run.json(newer, "fact", "add", "We decided to roast on Fridays.", "--type", "decision")
    now = {**env, "ENGRAM_TEST_NOW": "2026-03-05T09:30:00+01:00"}
    found = run.json(now, "recall", "what did we decide last week")
    assert [h["fact"]["id"] for h in found["results"]] == [kept["id"]]
    assert found["window"] == {
        "since": "2026-02-23",
        "until": "2026-03-02",
        "phrases": ["last week"],
        "label": "2026-02-23 to 2026-03-01",
    }
    assert found["type"] == "decision" and found["searched"] == ""
    shown = run(now, "recall", "what did we decide last week").stdout.splitlines()
    assert shown[0] == "(time: last week, 2026-02-23 to 2026-03-01; type: decision, no words)"
    assert "Tuesdays" in shown[1] and len(shown) == 2
    bad = run({**env, "ENGRAM_TEST_NOW": "soon"}, "recall", "x", ok=False)
    assert bad.returncode != 0 and "ENGRAM_TEST_NOW" in bad.stderr
