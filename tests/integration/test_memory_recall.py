"""Recall, context, daily notes and checkpoint / wake through the facade."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from engram.codec import encode
from engram.errors import InvalidInputError
from engram.memory import ranking
from engram.memory.neighbours import Neighbour
from engram.service import Engram


def test_recall_ranks_by_relevance_importance_and_recency(mem: Engram, clock: Any) -> None:
    text = "Espresso dial-in uses 18 g in, 36 g out."
    old = mem.fact_add(text, importance=0.9)
    clock.advance(days=120)
    minor = mem.fact_add(text, importance=0.2)
    important = mem.fact_add(text, importance=0.9)
    mem.fact_add("Ana prefers written decisions.", importance=1.0)  # not relevant
    clock.advance(days=1)
    hits = mem.recall("espresso dial-in").results
    assert [h.fact.id for h in hits if h.fact] == [important.id, minor.id, old.id]
    for h in hits:  # every score is the documented formula of its parts
        assert h.fact is not None
        age = ranking.age_days(h.fact.changed_at, clock.now)
        assert h.recency == pytest.approx(ranking.recency(age, 30))
        assert h.score == pytest.approx(ranking.recall_score(h.relevance, h.importance, h.recency))
    assert hits[0].relevance == hits[1].relevance == hits[2].relevance
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert [
        h.fact.id for h in mem.recall("espresso", tier_name="structural").results if h.fact
    ] == [
        important.id,
        old.id,
    ]
    assert mem.recall("espresso", fact_type="decision").results == ()


def test_recall_understands_date_phrases(mem: Engram, clock: Any) -> None:
    first = mem.fact_add("Roaster visit planned with Casa Tostado.")
    clock.advance(days=8)
    second = mem.fact_add("Roaster visit moved to May.")
    found = [h.fact.id for h in mem.recall("roaster visit this week").results if h.fact]
    assert found == [second.id]
    assert [h.fact.id for h in mem.recall("roaster last week").results if h.fact] == [first.id]
    assert [h.fact.id for h in mem.recall("roaster", until="last week").results if h.fact] == [
        first.id
    ]
    assert [h.fact.id for h in mem.recall("roaster before last week").results if h.fact] == []
    since = [h.fact.id for h in mem.recall("roaster", since="2026-03-01").results if h.fact]
    assert sorted(since) == sorted([first.id, second.id])
    assert [h.fact.id for h in mem.recall("", since="yesterday").results if h.fact] == [second.id]
    with pytest.raises(InvalidInputError, match="date phrase"):
        mem.recall("roaster", since="whenever")


def test_recall_with_notes_includes_ordinary_notes(mem: Engram) -> None:
    fact = mem.fact_add("Tiered pricing has three plans.")
    hits = mem.recall("tiered pricing plans", include_notes=True).results
    kinds = {(h.kind, h.path) for h in hits}
    assert ("fact", fact.path) in kinds and ("note", "Projects/Pricing Model.md") in kinds
    # notes rank by relevance × recency like facts: pick the one this test is about
    note_hit = next(h for h in hits if h.path == "Projects/Pricing Model.md")
    assert note_hit.kind == "note" and note_hit.importance == ranking.NOTE_IMPORTANCE
    assert encode(note_hit)["title"] == "Pricing Model"
    assert all(h.kind == "fact" for h in mem.recall("tiered pricing plans").results)


def test_context_fills_the_budget_in_profile_order(mem: Engram) -> None:
    mem.fact_add("Never ship a roast without a cupping score.", importance=0.95)
    mem.fact_add("Ana prefers written decisions.", importance=0.6)
    mem.fact_add("The office plant needs water.", importance=0.1)
    mem.fact_add("Pricing review with Ana Ruiz next month.", importance=0.5)
    for budget in (0, 10, 60, 150, 400, 4000):
        for profile in ("default", "planning", "incident", "handoff"):
            result = mem.memory_context("pricing model", profile, budget)
            assert result.used_tokens <= budget
            assert len(result.text) <= budget * 4
    full = mem.memory_context("pricing model", "default", 4000)
    sources = [i.source for i in full.items]
    assert sources[0] == "structural" and "daily" in sources and "search" in sources
    assert "graph" in sources and "contextual" in sources
    order = ("structural", "daily", "search", "graph", "potential", "contextual")
    assert sources == sorted(sources, key=order.index)
    graph = {i.ref for i in full.items if i.source == "graph"}
    searched = {i.ref for i in full.items if i.source == "search"}
    assert "People/Kenji Sato.md" in graph and not graph & searched  # linked from the hits
    planning = mem.memory_context("pricing model", "planning", 4000)
    assert planning.items[0].source == "search"
    data = json.loads(json.dumps(encode(full)))
    assert data["usedTokens"] <= data["budget"] and {"source", "score", "ref"} <= set(
        data["items"][0]
    )


def test_context_takes_graph_neighbours_from_an_injected_function(mem: Engram) -> None:
    calls: list[tuple[list[int], int]] = []

    def fake(seeds: Any, hops: int) -> list[Neighbour]:
        calls.append((list(seeds), hops))
        return [Neighbour(1, "Somewhere/Else.md", "Else", 1, 0)]

    result = mem.memory_context("pricing model", budget=4000, neighbours=fake)
    assert calls and calls[0][1] == 2 and calls[0][0]
    assert any(i.source == "graph" and i.ref == "Somewhere/Else.md" for i in result.items)


def test_daily_notes_keep_what_people_write(mem: Engram, vault: Path, clock: Any) -> None:
    mem.fact_add("We decided on weekly cuppings.")
    path = vault / "Engram/daily/2026-03-05.md"
    path.write_text(path.read_text() + "\nMy own reflection.\n")
    mem.update()
    mem.fact_add("Kenji committed to the roast calendar.")
    text = path.read_text()
    assert text.endswith("\nMy own reflection.\n") and "factsCount: 2" in text
    assert "## Commitment (1)" in text and "## Decision (1)" in text
    again = mem.daily("2026-03-05")
    assert again.facts == 2 and not again.written  # same facts: not rewritten
    assert path.read_text() == text
    assert mem.daily("yesterday").written is False  # no facts that day: no empty note
    assert not (vault / "Engram/daily/2026-03-04.md").exists()


def test_checkpoint_wake_and_end_session(mem: Engram, vault: Path, clock: Any) -> None:
    assert mem.wake().dirty is False and mem.wake().checkpoint is None
    start = clock.now
    made = {}
    for age, importance, text in (
        (6, 0.9, "Old structural A"),
        (5, 0.85, "Old structural B"),
        (4, 0.95, "Old structural C"),
        (4, 0.81, "Old structural D"),
        (3, 0.6, "Three days potential"),
        (2, 0.85, "Two days structural"),
        (1, 0.5, "Yesterday potential"),
        (0, 0.3, "Today contextual"),
        (0, 0.5, "Today potential"),
        (8, 1.0, "Too old"),
    ):
        clock.now = start - dt.timedelta(days=age)
        made[text] = mem.fact_add(text, importance=importance, fact_type="fact")
    clock.now = start
    (vault / "Engram/ledger/observations/2026/03/05.md").write_text(
        (vault / "Engram/ledger/observations/2026/03/05.md").read_text()
        + "- [decision|c=0.90|i=0.90] Typed into the ledger by hand\n"
    )
    mem.fact_archive(made["Yesterday potential"].id)
    cp = mem.checkpoint("memory tests", focus="wake", blocked="nothing", urgent=True)
    state = vault / ".engram"
    assert json.loads((state / "last-checkpoint.json").read_text())["workingOn"] == "memory tests"
    assert len(list((state / "checkpoints").glob("*.json"))) == 1
    woke = mem.wake()
    assert woke.dirty and woke.checkpoint == cp
    assert [r.text for r in woke.recent] == [
        "Typed into the ledger by hand",
        "Today potential",
        "Two days structural",
        "Old structural C",
        "Old structural A",
        "Old structural B",
    ]
    ended = mem.end_session("Wrote the wake tests.", created_by="agent-7")
    assert ended.was_dirty and ended.handoff is not None
    assert ended.handoff.fact_type == "session_summary" and ended.handoff.path.startswith(
        "Engram/handoffs/"
    )
    again = mem.wake()
    assert not again.dirty and [f.id for f in again.handoffs] == [ended.handoff.id]
    assert mem.end_session().was_dirty is False
    with pytest.raises(InvalidInputError):
        mem.checkpoint("  ")
