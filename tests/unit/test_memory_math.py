"""Memory math, table-driven: tiers, inference, recall score, lifecycle, dates, budget, wake."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.errors import InvalidInputError
from engram.memory import context as ctx
from engram.memory import dates, ranking, timewords
from engram.memory.infer import infer_importance, infer_type
from engram.memory.model import tier
from engram.memory.wake import Recent, decay_select

NOW = dt.datetime(2026, 3, 5, 12, 0, tzinfo=dt.UTC)
TODAY = NOW.date()  # a Thursday


@pytest.mark.parametrize(
    ("importance", "expected"),
    [
        (1.0, "structural"),
        (0.8, "structural"),
        (0.79, "potential"),
        (0.4, "potential"),
        (0.39, "contextual"),
        (0.0, "contextual"),
    ],
)
def test_tiers(importance: float, expected: str) -> None:
    assert tier(importance) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We decided to go with Postgres", "decision"),
        ("Chose TypeScript over Python for the CLI", "decision"),
        ("Opted for weekly releases", "decision"),
        ("Kenji promised the roast profile by Friday", "commitment"),
        ("Deadline for the grant is March 3", "commitment"),
        ("Learned that the grinder needs recalibration", "lesson"),
        ("Realized caching hid the bug", "lesson"),
        ("Never again deploy on a Friday", "lesson"),
        ("Never deploy on Fridays", "steering_rule"),
        ("The import failed with a timeout", "error"),
        ("Ana prefers short meetings", "preference"),
        ("Next step: draft the pricing page", "plan"),
        ("Kenji reports to Ana", "relationship"),
        ("Felt frustrated by the flaky tests", "feeling"),
        ("The server runs on port 3000", "observation"),
    ],
)
def test_type_inference(text: str, expected: str) -> None:
    assert infer_type(text) == expected


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("We decided on tiers", "decision", 0.8),
        ("Critical: we decided on tiers", "decision", 0.9),
        ("The server runs on port 3000", "observation", 0.4),
        ("Maybe the server runs on port 3000", "observation", 0.3),
        ("Security deadline, not sure", "commitment", 0.8),
        ("Anything", "made_up_type", 0.5),
    ],
)
def test_importance_inference(text: str, kind: str, expected: float) -> None:
    assert infer_importance(text, kind) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("age", "half_life", "expected"),
    [(0, 30, 1.0), (30, 30, 0.5), (60, 30, 0.25), (-5, 30, 1.0), (10, 0, 1.0)],
)
def test_recency(age: float, half_life: float, expected: float) -> None:
    assert ranking.recency(age, half_life) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("relevance", "importance", "recent", "state", "expected"),
    [
        (1.0, 1.0, 1.0, "active", 1.0),
        (1.0, 0.0, 1.0, "active", 0.3),
        (1.0, 1.0, 0.0, "active", 0.3),
        (1.0, 0.0, 0.0, "active", 0.09),
        (0.5, 0.5, 0.5, "active", 0.5 * 0.65 * 0.65),
        (1.0, 1.0, 1.0, "dormant", 0.8),
        (1.0, 1.0, 1.0, "archived", 0.5),
        (0.0, 1.0, 1.0, "active", 0.0),
    ],
)
def test_recall_score(
    relevance: float, importance: float, recent: float, state: str, expected: float
) -> None:
    assert ranking.recall_score(relevance, importance, recent, state) == pytest.approx(expected)


def test_recall_order_follows_the_formula() -> None:
    # (name, relevance, importance, age days): importance and age re-order close matches
    candidates = [
        ("old-important", 0.8, 0.9, 90),
        ("new-minor", 0.8, 0.2, 0),
        ("new-important", 0.7, 0.9, 1),
        ("irrelevant", 0.1, 1.0, 0),
    ]
    scored = sorted(
        candidates,
        key=lambda c: -ranking.recall_score(c[1], c[2], ranking.recency(c[3], 30)),
    )
    assert [c[0] for c in scored] == ["new-important", "new-minor", "old-important", "irrelevant"]


@pytest.mark.parametrize(
    ("state", "tier_name", "idle_days", "expected"),
    [
        ("active", "potential", 10, None),
        ("active", "potential", 30, "dormant"),
        ("active", "structural", 400, "dormant"),
        ("dormant", "potential", 100, None),
        ("dormant", "potential", 210, "archived"),
        ("dormant", "structural", 400, None),  # structural facts are never archived by age
        ("dormant", "potential", 3, "active"),  # recalled or edited again
        ("archived", "potential", 999, None),
        ("merged", "potential", 999, None),
    ],
)
def test_lifecycle_transitions(
    state: str, tier_name: str, idle_days: int, expected: str | None
) -> None:
    last = NOW - dt.timedelta(days=idle_days)
    assert ranking.next_state(state, tier_name, last, NOW, 30, 180) == expected


def D(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


@pytest.mark.parametrize(
    ("phrase", "since", "until"),
    [
        ("today", "2026-03-05", "2026-03-06"),
        ("yesterday", "2026-03-04", "2026-03-05"),
        ("this week", "2026-03-02", "2026-03-06"),
        ("last week", "2026-02-23", "2026-03-02"),
        ("this month", "2026-03-01", "2026-03-06"),
        ("last month", "2026-02-01", "2026-03-01"),
        ("last year", "2025-01-01", "2026-01-01"),
        ("last 3 days", "2026-03-03", "2026-03-06"),
        ("past 2 weeks", "2026-02-19", "2026-03-06"),
        ("3 days ago", "2026-03-02", "2026-03-03"),
        ("a month ago", "2026-02-01", "2026-03-01"),
        ("monday", "2026-03-02", "2026-03-03"),
        ("last thursday", "2026-02-26", "2026-02-27"),
        ("since 2026-01-01", "2026-01-01", None),
        ("since yesterday", "2026-03-04", None),
        ("after 2026-01", "2026-02-01", None),
        ("before 2025", None, "2025-01-01"),
        ("until last week", None, "2026-03-02"),  # to its end, as --until
        ("between 2025-01 and 2025-03", "2025-01-01", "2025-04-01"),
        ("2024-02", "2024-02-01", "2024-03-01"),
        ("2024-02-29", "2024-02-29", "2024-03-01"),
        ("  This   Week ", "2026-03-02", "2026-03-06"),
    ],
)
def test_date_phrases(phrase: str, since: str | None, until: str | None) -> None:
    got = dates.parse_range(phrase, TODAY)
    assert got == dates.DateRange(D(since) if since else None, D(until) if until else None)


@pytest.mark.parametrize("phrase", ["next tuesday", "since whenever", "2025-13", "soon"])
def test_bad_date_phrases_say_what_works(phrase: str) -> None:
    with pytest.raises(InvalidInputError, match=r"try today|not a date"):
        dates.parse_range(phrase, TODAY)


@pytest.mark.parametrize(
    ("query", "rest", "since", "until"),
    [
        ("pricing decisions this week", "pricing decisions", "2026-03-02", "2026-03-06"),
        ("what did Ana say yesterday", "what did Ana say", "2026-03-04", "2026-03-05"),
        ("roaster since 2026-01-01", "roaster", "2026-01-01", None),
        ("roaster last 3 days about grind", "roaster about grind", "2026-03-03", "2026-03-06"),
        ("no dates here 2026", "no dates here 2026", None, None),
    ],
)
def test_date_phrases_in_queries(
    query: str, rest: str, since: str | None, until: str | None
) -> None:
    got_rest, got = timewords.extract(query, TODAY)
    assert got_rest == rest
    assert got == dates.DateRange(D(since) if since else None, D(until) if until else None)


items = st.builds(
    ctx.ContextItem,
    source=st.sampled_from(ctx.SOURCES),
    text=st.text(min_size=0, max_size=2000),
    score=st.floats(0, 1),
    ref=st.text(min_size=1, max_size=5),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(items, max_size=30), st.sampled_from(list(ctx.PROFILES)), st.integers(0, 3000))
def test_context_budget_is_never_exceeded(
    pool: list[ctx.ContextItem], profile: str, budget: int
) -> None:
    chosen = ctx.fit(pool, profile, budget)
    assert sum(i.tokens for i in chosen) <= budget
    assert ctx.estimate_tokens(ctx.join(chosen)) <= budget
    assert len({i.ref for i in chosen}) == len(chosen)


def test_context_follows_the_profile_order() -> None:
    pool = [
        ctx.ContextItem(source, f"{source} text", 0.5, source) for source in reversed(ctx.SOURCES)
    ]
    for profile, order in ctx.PROFILES.items():  # the reflection goes only into handoff
        assert [i.source for i in ctx.fit(pool, profile, 10_000)] == list(order)
    with pytest.raises(InvalidInputError, match="planning"):
        ctx.fit(pool, "nope", 100)


def test_context_cuts_the_last_item_to_fill_the_budget() -> None:
    pool = [
        ctx.ContextItem("structural", "a" * 40, 1.0, "a"),
        ctx.ContextItem("daily", "word " * 200, 1.0, "b"),
    ]
    chosen = ctx.fit(pool, "default", 100)
    assert [i.ref for i in chosen] == ["a", "b"]
    assert chosen[1].truncated and chosen[1].text.endswith("…")
    assert sum(i.tokens for i in chosen) <= 100


def _recent(key: str, age: int, tier_name: str, importance: float) -> Recent:
    return Recent(key, TODAY - dt.timedelta(days=age), tier_name, importance, key, "fact")


def test_wake_decay_table() -> None:
    pool = [
        _recent("t-s", 0, "structural", 0.9),
        _recent("t-p", 0, "potential", 0.5),
        _recent("t-c", 0, "contextual", 0.1),
        *(_recent(f"y-p{i}", 1, "potential", 0.4 + i / 100) for i in range(7)),
        _recent("y-s", 1, "structural", 0.8),
        _recent("d2-s", 2, "structural", 0.8),
        _recent("d3-s", 3, "structural", 0.8),
        _recent("d3-p", 3, "potential", 0.7),
        *(_recent(f"d{4 + i % 3}-s{i}", 4 + i % 3, "structural", 0.8 + i / 100) for i in range(5)),
        _recent("d5-p", 5, "potential", 0.79),
        _recent("d7-s", 7, "structural", 1.0),
    ]
    kept = [r.key for r in decay_select(pool, TODAY)]
    assert kept == [
        "t-s",
        "t-p",  # today: structural + potential
        "y-s",
        "y-p6",
        "y-p5",
        "y-p4",
        "y-p3",
        "y-p2",  # yesterday: + top 5 potential
        "d2-s",
        "d3-s",  # 2-3 days: structural only
        "d5-s4",
        "d4-s3",
        "d6-s2",  # 4-6 days: the 3 most important structural
    ]  # 7+ days and contextual: nothing
