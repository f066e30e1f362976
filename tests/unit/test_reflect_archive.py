"""ISO weeks, reflection merges that keep a person's text, and which ledger days archive."""

from __future__ import annotations

import datetime as dt

import pytest

from engram.errors import InvalidInputError
from engram.memory import archive, reflect

W10 = reflect.Week(2026, 10)
ITEM = reflect.Item(
    "a" * 32, "Sell [beans] | bundles", "decision", 0.85, "Engram/decisions/x", "bot"
)


def facts(**kw: object) -> reflect.WeekFacts:
    base = dict(
        week=W10, facts=[ITEM], commitments=[], recalled=[], recalls={}, raw_lines={}, days=[]
    )
    return reflect.WeekFacts(**{**base, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("2026-W10", dt.date(2026, 3, 2)),
        ("2020-W53", dt.date(2020, 12, 28)),
        ("2026-W01", dt.date(2025, 12, 29)),
    ],
)
def test_iso_weeks(text: str, start: dt.date) -> None:
    week = reflect.parse_week(text)
    assert week.start == start and week.label == text and reflect.week_of(start) == week
    assert week.end - week.start == dt.timedelta(days=7)


@pytest.mark.parametrize("text", ["2025-W53", "2026-W00", "2026W10", "2026-W1", ""])
def test_not_weeks(text: str) -> None:
    with pytest.raises(InvalidInputError):
        reflect.parse_week(text)


def test_merge_keeps_the_persons_text_and_is_idempotent() -> None:
    first = reflect.merge(None, facts())
    assert "[[Engram/decisions/x|Sell (beans) / bundles]]" in first
    mine = first + "\nMy own closing thought.\n"
    assert reflect.merge(mine, facts()) == mine
    more = reflect.merge(mine, facts(recalls={"bot": 2}))
    assert (
        more.endswith("\nMy own closing thought.\n") and "- bot: 1 fact stored, 2 recalls" in more
    )
    with pytest.raises(InvalidInputError, match="markers"):
        reflect.merge(mine.replace(reflect.END, ""), facts())
    assert reflect.readable(first).startswith("**1 fact**: 1 decision")


def test_only_dated_ledger_days_past_the_window_archive() -> None:
    files = [
        "E/ledger/observations/2026/01/01.md",
        "E/ledger/observations/2026/03/01.md",
        "E/ledger/observations/2026/02/30.md",  # no such day
        "E/ledger/observations/notes.md",
        "E/ledger/observations/2025/12/31.md",
    ]
    moves = archive.due("E", files, dt.date(2026, 3, 5), 60)
    assert [(m.source, m.target) for m in moves] == [
        ("E/ledger/observations/2025/12/31.md", "E/ledger/archive/observations/2025/12/31.md"),
        ("E/ledger/observations/2026/01/01.md", "E/ledger/archive/observations/2026/01/01.md"),
    ]
