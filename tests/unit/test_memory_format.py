"""Fact notes: round trip, tolerant reading, and frontmatter edits that keep people's bytes."""

from __future__ import annotations

import datetime as dt
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.errors import InvalidInputError
from engram.memory import format as fmt
from engram.memory import props
from engram.memory.model import FACT_TYPES, LIFECYCLE_STATES, Fact, file_name, normalize_text

UTC = dt.UTC
words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
)
names = st.text(alphabet=string.ascii_letters + string.digits + " _-é日本", min_size=1, max_size=20)
moments = st.datetimes(
    min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=0))
scores = st.floats(min_value=0, max_value=1).map(lambda x: round(x, 4))
ids = st.text(alphabet="0123456789abcdef", min_size=32, max_size=32)


def _clean(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(" ".join(v.split()) for v in values if v.strip()))


@st.composite
def facts(draw: st.DrawFn) -> Fact:
    text = normalize_text(draw(st.text(min_size=1, max_size=300)))
    if not text:
        text = "x"
    title = " ".join(draw(words).split()) or "t"
    return Fact(
        id=draw(ids),
        title=title,
        text=text,
        fact_type=draw(st.sampled_from(FACT_TYPES)),
        timestamp=draw(moments),
        updated_at=draw(st.none() | moments),
        source=draw(st.sampled_from(["cli", "human", "[[Meetings/Weekly]]"])),
        created_by=draw(st.sampled_from(["agent-7", "human"])),
        scope=draw(st.sampled_from(["default", "private-x"])),
        tags=tuple(t for t in _clean(draw(st.lists(names, max_size=4))) if "," not in t),
        entities=_clean(draw(st.lists(names, max_size=3))),
        importance=draw(scores),
        confidence=draw(scores),
        lifecycle=draw(st.sampled_from(LIFECYCLE_STATES)),
        superseded_by=draw(st.none() | ids),
        supersedes=draw(st.none() | ids),
        contradicts_with=tuple(dict.fromkeys(draw(st.lists(ids, max_size=2)))),
        convex_id=draw(st.none() | st.text(alphabet="abcdefghjk0123456789", min_size=8)),
        vault_synced_at=draw(st.none() | moments),
        last_edited_by=draw(st.sampled_from(["human", "system"])),
        path="Engram/facts/x.md",
    )


@settings(max_examples=150, deadline=None)
@given(facts())
def test_fact_markdown_fact_round_trip(fact: Fact) -> None:
    note = fmt.render(fact)
    assert fmt.parse(note, fact.path) == fact
    # a system rewrite with nothing changed touches nothing
    data, _ = props.read(note)
    assert data is not None
    assert props.edit(note, fmt.changes_for(fact, data)) == note


def test_written_values_are_dataview_friendly() -> None:
    fact = Fact(
        id="a" * 32,
        title="Pick Adyen",
        text="We picked [[Adyen]].",
        timestamp=dt.datetime(2026, 3, 5, 10, 15, tzinfo=UTC),
        entities=("Ana Ruiz",),
        importance=0.85,
    )
    note = fmt.render(fact)
    assert "timestamp: 2026-03-05T10:15:00Z\n" in note  # ISO 8601, unquoted: a date
    assert "importanceScore: 0.85\n" in note  # a number, not a string
    assert '- "[[Ana Ruiz]]"\n' in note  # a link Obsidian and Dataview follow
    assert "supersededBy:\n" in note  # empty, not the word null
    assert note.endswith("---\n\nWe picked [[Adyen]].\n")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.7, 0.7),
        ("0.7", 0.7),
        ("80%", 0.8),
        (85, 0.85),
        ("high", 0.5),
        (None, 0.5),
        (True, 0.5),
        (-3, 0.0),
        (250, 1.0),
    ],
)
def test_scores_people_write(value: object, expected: float) -> None:
    assert fmt.unit(value, 0.5) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (dt.datetime(2026, 3, 5, 10, 0, tzinfo=UTC), "2026-03-05T10:00:00+00:00"),
        (dt.datetime(2026, 3, 5, 10, 0), "2026-03-05T10:00:00+00:00"),
        (dt.date(2026, 3, 5), "2026-03-05T00:00:00+00:00"),
        ("2026-03-05T12:00:00+02:00", "2026-03-05T10:00:00+00:00"),
        ("2026-03-05 10:00", "2026-03-05T10:00:00+00:00"),
        ("2026-03-05T10:00:00Z", "2026-03-05T10:00:00+00:00"),
        (1772704800000, "2026-03-05T10:00:00+00:00"),
        ("next tuesday", None),
        (None, None),
    ],
)
def test_times_people_write(value: object, expected: str | None) -> None:
    got = fmt.to_time(value)
    assert (got.isoformat() if got else None) == expected


def test_reading_tolerates_what_people_do() -> None:
    note = (
        "---\nlifecycleState: Dormant\ncustom: keep me\nimportanceScore: '0.9'\n"
        'tags: "alpha, #beta"\n'
        "entities: ['[[People/Ana Ruiz|Ana]]', Kenji]\n"
        "factType: Steering rule\nid: 1234abcd\ntimestamp: 2026-01-02\n---\n\nAlways test.\n"
    )
    fact = fmt.parse(note, "Engram/preferences/always-test-1234abcd.md")
    assert fact is not None
    assert fact.fact_type == "steering_rule"
    assert fact.importance == 0.9
    assert fact.lifecycle == "dormant"
    assert fact.tags == ("alpha", "beta")
    assert fact.entities == ("People/Ana Ruiz", "Kenji")
    assert fact.title == "always-test-1234abcd"  # no title: the file name
    assert fact.timestamp == dt.datetime(2026, 1, 2, tzinfo=UTC)
    assert fmt.parse("---\nid: [broken\n---\nx", "a.md") is None
    assert fmt.parse("no frontmatter", "a.md") is None  # no id: not a fact yet


def test_edit_keeps_other_keys_comments_and_order_byte_for_byte() -> None:
    note = (
        "---\n# my comment\ntitle: Mine   # inline comment\ncustom: [a,   b]\n"
        "aliases:\n- x\n\nblock: |\n  line one\n\n  line two\nlifecycleState: active\n---\n"
        "Body **stays**\n"
    )
    out = props.edit(note, {"lifecycleState": "archived", "id": "abc", "custom": props.DELETE})
    assert out == (
        "---\n# my comment\ntitle: Mine   # inline comment\n"
        "aliases:\n- x\n\nblock: |\n  line one\n\n  line two\nlifecycleState: archived\n"
        "id: abc\n---\nBody **stays**\n"
    )


def test_edit_falls_back_to_full_dump_for_unusual_yaml_and_refuses_broken_yaml() -> None:
    note = "---\n? complex key\n: 1\nb: 2\n---\nbody\n"
    out = props.edit(note, {"b": 3})
    data, body = props.read(out)
    assert data == {"complex key": 1, "b": 3} and body == "body\n"
    with pytest.raises(InvalidInputError):
        props.edit("---\na: [oops\n---\nbody\n", {"b": 1})
    assert props.edit("plain\n", {"id": "x"}) == "---\nid: x\n---\nplain\n"
    assert props.edit("a\r\nb\r\n", {"id": "x"}) == "---\r\nid: x\r\n---\r\na\r\nb\r\n"


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("We chose Adyen over Stripe!", "we-chose-adyen-over-stripe-0123abcd.md"),
        ("Café naïve résumé", "cafe-naive-resume-0123abcd.md"),
        ("???", "fact-0123abcd.md"),
        ("a" * 100, "a" * 60 + "-0123abcd.md"),
    ],
)
def test_file_names(title: str, name: str) -> None:
    assert file_name(title, "0123abcd" + "0" * 24) == name
