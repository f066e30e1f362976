"""Time words in recall queries: generated phrases in generated sentences (memory/timewords.py),
and the question a query asks (memory/questions.py)."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.memory import dates, questions, timewords
from engram.memory.dates import DateRange

TODAY = dt.date(2026, 3, 5)  # a Thursday
D = dt.date.fromisoformat

# phrase -> [since, until) on TODAY; each one is also found inside a sentence
PHRASES: dict[str, tuple[str | None, str | None]] = {
    "today": ("2026-03-05", "2026-03-06"),
    "yesterday": ("2026-03-04", "2026-03-05"),
    "the day before yesterday": ("2026-03-03", "2026-03-04"),
    "this week": ("2026-03-02", "2026-03-06"),
    "earlier this week": ("2026-03-02", "2026-03-06"),
    "last week": ("2026-02-23", "2026-03-02"),
    "this month": ("2026-03-01", "2026-03-06"),
    "last month": ("2026-02-01", "2026-03-01"),
    "this quarter": ("2026-01-01", "2026-03-06"),
    "last quarter": ("2025-10-01", "2026-01-01"),
    "this year": ("2026-01-01", "2026-03-06"),
    "last year": ("2025-01-01", "2026-01-01"),
    "last 3 days": ("2026-03-03", "2026-03-06"),
    "past two weeks": ("2026-02-19", "2026-03-06"),
    "the last 7 days": ("2026-02-27", "2026-03-06"),
    "in the past week": ("2026-02-26", "2026-03-06"),
    "over the last month": ("2026-02-05", "2026-03-06"),
    "last 24 hours": ("2026-03-04", "2026-03-06"),
    "3 days ago": ("2026-03-02", "2026-03-03"),
    "two weeks ago": ("2026-02-19", "2026-02-26"),
    "a month ago": ("2026-02-01", "2026-03-01"),
    "a year ago": ("2025-01-01", "2026-01-01"),
    "a few days ago": ("2026-02-28", "2026-03-04"),
    "a couple of days ago": ("2026-03-02", "2026-03-05"),
    "on monday": ("2026-03-02", "2026-03-03"),
    "last thursday": ("2026-02-26", "2026-02-27"),
    "in May 2024": ("2024-05-01", "2024-06-01"),
    "May 2024": ("2024-05-01", "2024-06-01"),
    "in March": ("2026-03-01", "2026-04-01"),
    "in December": ("2025-12-01", "2026-01-01"),
    "last March": ("2025-03-01", "2025-04-01"),
    "on March 5th, 2024": ("2024-03-05", "2024-03-06"),
    "Feb 14": ("2026-02-14", "2026-02-15"),
    "Dec. 24": ("2025-12-24", "2025-12-25"),
    "the 5th of March 2024": ("2024-03-05", "2024-03-06"),
    "in 2024": ("2024-01-01", "2025-01-01"),
    "in 2024-03": ("2024-03-01", "2024-04-01"),
    "in Q2 2025": ("2025-04-01", "2025-07-01"),
    "on 2026-03-01": ("2026-03-01", "2026-03-02"),
    "2026-03-01": ("2026-03-01", "2026-03-02"),
    "since Monday": ("2026-03-02", None),
    "since last week": ("2026-02-23", None),
    "since 2026-01-01": ("2026-01-01", None),
    "since 7d": ("2026-02-27", None),
    "after 2026-01": ("2026-02-01", None),
    "before 2025": (None, "2025-01-01"),
    "prior to last week": (None, "2026-02-23"),
    "until yesterday": (None, "2026-03-05"),
    "up to last month": (None, "2026-03-01"),
    "from last week": ("2026-02-23", "2026-03-02"),
    "between 2025-01 and 2025-03": ("2025-01-01", "2025-04-01"),
    "from March to May": ("2026-03-01", "2026-06-01"),
    "from November to February": ("2025-11-01", "2026-03-01"),
    # German
    "heute": ("2026-03-05", "2026-03-06"),
    "gestern": ("2026-03-04", "2026-03-05"),
    "vorgestern": ("2026-03-03", "2026-03-04"),
    "diese Woche": ("2026-03-02", "2026-03-06"),
    "letzte Woche": ("2026-02-23", "2026-03-02"),
    "vorige Woche": ("2026-02-23", "2026-03-02"),
    "in der vergangenen Woche": ("2026-02-23", "2026-03-02"),
    "letzten Monat": ("2026-02-01", "2026-03-01"),
    "dieses Jahr": ("2026-01-01", "2026-03-06"),
    "vor 3 Tagen": ("2026-03-02", "2026-03-03"),
    "vor zwei Wochen": ("2026-02-19", "2026-02-26"),
    "in den letzten 7 Tagen": ("2026-02-27", "2026-03-06"),
    "am Montag": ("2026-03-02", "2026-03-03"),
    "seit Montag": ("2026-03-02", None),
    "im März 2024": ("2024-03-01", "2024-04-01"),
    "am 5. März": ("2026-03-05", "2026-03-06"),
    "im Jahr 2024": ("2024-01-01", "2025-01-01"),
    "bis gestern": (None, "2026-03-05"),
    "zwischen 2025-01 und 2025-03": ("2025-01-01", "2025-04-01"),
}
# words around a phrase that must survive as the search words
CONTEXTS = [
    ("what did we decide", ""),
    ("", "pricing review"),
    ("notes about Kenji", "and the roaster"),
]


def expected(phrase: str) -> DateRange:
    since, until = PHRASES[phrase]
    return DateRange(D(since) if since else None, D(until) if until else None)


def cases() -> list[tuple[str, str, str]]:
    out = []
    for phrase, (before, after) in itertools.product(PHRASES, CONTEXTS):
        for variant in (phrase, phrase.upper(), phrase.replace(" ", "  ")):
            query = " ".join(p for p in (before, variant, after) if p)
            out.append((query, phrase, " ".join(p for p in (before, after) if p)))
    return out


@pytest.mark.parametrize(("query", "phrase", "rest"), cases())
def test_time_words_in_generated_sentences(query: str, phrase: str, rest: str) -> None:
    found = timewords.read(query, TODAY)
    assert found.range == expected(phrase), query
    assert found.rest == rest, query  # the time words are not search words
    assert [" ".join(p.lower().split()) for p in found.phrases] == [phrase.lower()]


@pytest.mark.parametrize(
    "query",
    [
        "what may we do",  # a modal verb, not the month
        "march madness bracket",
        "monday meeting notes",  # a weekday needs on / last / since
        "budget 2026",  # a bare year needs "in"
        "jan decided the roast",  # Jan is a name
        "the last word on pricing",
        "a 7d rolling average",
        "vorher und nachher",
        "meeting 2026-02-30",  # no such day: words
        "decision matrix",
        "",
    ],
)
def test_ordinary_words_are_not_time_words(query: str) -> None:
    found = timewords.read(query, TODAY)
    assert found.range.is_open() and found.phrases == ()
    assert found.rest == " ".join(query.split())


def test_several_time_words_are_anded() -> None:
    found = timewords.read("pricing since 2025-06 before 2026", TODAY)
    assert found.range == DateRange(D("2025-06-01"), D("2026-01-01"))
    assert found.rest == "pricing" and found.phrases == ("since 2025-06", "before 2026")
    empty = timewords.read("since today before yesterday", TODAY).range
    assert empty.is_empty()


@pytest.mark.parametrize(
    ("phrase", "since", "until"),
    [
        ("7d", "2026-02-27", "2026-03-06"),
        ("2w", "2026-02-19", "2026-03-06"),
        ("3m", "2025-12-05", "2026-03-06"),
        ("1y", "2025-03-05", "2026-03-06"),
        ("24h", "2026-03-04", "2026-03-06"),
        ("march", "2026-03-01", "2026-04-01"),
        ("q1", "2026-01-01", "2026-04-01"),
        ("q2", "2025-04-01", "2025-07-01"),
    ],
)
def test_option_values_take_compact_spans_and_bare_names(
    phrase: str, since: str, until: str
) -> None:
    """--since / --until (and the HTTP since/until) take what qmd and basic-memory users type."""
    assert dates.parse_range(phrase, TODAY) == DateRange(D(since), D(until))


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_any_text_is_read_without_error_and_keeps_its_other_words(text: str) -> None:
    found = timewords.read(text, TODAY)
    words = text.split()
    rest = found.rest.split()
    assert len(rest) <= len(words)
    if found.phrases == ():
        assert rest == words


@pytest.mark.parametrize(
    ("query", "kind", "rest"),
    [
        ("what did we decide", "decision", ""),
        ("what did we decide about pricing", "decision", "pricing"),
        ("What was decided on hiring", "decision", "hiring"),
        ("which decisions did we make about the roaster", "decision", "the roaster"),
        ("was haben wir entschieden", "decision", ""),
        ("open commitments for Kenji", "commitment", "for Kenji"),
        ("what do we prefer for coffee", "preference", "for coffee"),
        ("decision matrix", None, "decision matrix"),
        ("pricing decided", None, "pricing decided"),
    ],
)
def test_a_question_asks_for_a_fact_type(query: str, kind: str | None, rest: str) -> None:
    assert questions.asked_type(query) == (kind, rest)
