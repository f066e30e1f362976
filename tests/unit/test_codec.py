"""The one codec: any value of a declared type survives encode -> decode, every bound is
checked, and the schema it publishes accepts exactly what it encodes."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any, ClassVar, Literal

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.codec import arg, camel, decode, encode, schema
from engram.errors import InvalidInputError


@dataclasses.dataclass(frozen=True)
class Inner:
    """A nested value."""

    label: str
    at: dt.datetime | None = None
    pairs: tuple[tuple[int, int], ...] = ()


@dataclasses.dataclass(frozen=True)
class Outer:
    """A value with one field of every kind the codec handles."""

    fact_id: str = arg(doc="which fact", max_len=64)
    count: int = arg(10, low=1, high=200)
    score: float = arg(0.5, low=0.0, high=1.0)
    flag: bool = False
    kind: Literal["fact", "note"] = "fact"
    tags: tuple[str, ...] = arg((), max_items=5, max_len=20)
    inner: Inner | None = None
    many: tuple[Inner, ...] = ()
    extra: dict[str, Any] | None = None
    day: dt.date | None = None
    where: Path | None = None
    importance: float = arg(0.5, wire="importanceScore")

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"tier": "tier"}

    @property
    def tier(self) -> str:
        return "high" if self.importance >= 0.8 else "low"


UTC_TIMES = st.datetimes(timezones=st.just(dt.UTC)).map(lambda t: t.replace(microsecond=0))
TEXT = st.text(st.characters(blacklist_characters="\x00"), max_size=20)
INNERS = st.builds(
    Inner,
    label=TEXT,
    at=st.none() | UTC_TIMES,
    pairs=st.lists(st.tuples(st.integers(), st.integers()), max_size=3).map(tuple),
)
OUTERS = st.builds(
    Outer,
    fact_id=st.text(st.characters(blacklist_characters="\x00"), max_size=64),
    count=st.integers(1, 200),
    score=st.floats(0, 1),
    flag=st.booleans(),
    kind=st.sampled_from(["fact", "note"]),
    tags=st.lists(TEXT, max_size=5).map(tuple),
    inner=st.none() | INNERS,
    many=st.lists(INNERS, max_size=3).map(tuple),
    extra=st.none() | st.dictionaries(TEXT, st.integers() | TEXT, max_size=3),
    day=st.none() | st.dates(),
    where=st.none() | st.builds(Path, st.sampled_from(["a", "a/b.md", "/x/y"])),
    importance=st.floats(0, 1),
)


@given(OUTERS)
def test_every_value_survives_a_round_trip_and_matches_its_schema(value: Outer) -> None:
    data = encode(value)
    assert decode(Outer, data) == value
    jsonschema.validate(data, schema(Outer))


def test_wire_names_are_camel_case_unless_declared_and_extras_are_read_only() -> None:
    data = encode(Outer(fact_id="abc", importance=0.9))
    assert data["factId"] == "abc" and data["importanceScore"] == 0.9 and data["tier"] == "high"
    assert "importance" not in data
    assert decode(Outer, data).importance == 0.9  # the extra is ignored, not an error
    assert camel("created_by") == "createdBy" and camel("n") == "n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "'factId' is required"),
        ({"factId": "x", "count": 0}, "count must be from 1 to 200, got 0"),
        ({"factId": "x", "count": True}, "count must be a whole number"),
        ({"factId": "x", "score": "high"}, "score must be a number"),
        ({"factId": "x" * 65}, "factId is too long"),
        ({"factId": "a\x00b"}, "factId must not contain NUL"),
        ({"factId": "x", "tags": ["a"] * 6}, "tags takes at most 5 items"),
        ({"factId": "x", "tags": ["y" * 21]}, "is too long \\(at most 20"),
        ({"factId": "x", "kind": "other"}, "kind must be one of fact, note"),
        ({"factId": "x", "inner": {"label": 3}}, "inner.label must be a string"),
        ({"factId": "x", "many": [{"label": "a", "pairs": [[1]]}]}, "many[0].pairs[0] must have 2"),
        ({"factId": "x", "day": "yesterday"}, "day must be an ISO 8601 date"),
        ({"factId": "x", "nope": 1}, "unknown field 'nope'"),
        ([], "the body must be an object"),
    ],
)
def test_bad_input_is_refused_naming_the_field(body: Any, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        decode(Outer, body)


def test_the_schema_carries_descriptions_bounds_and_required_fields() -> None:
    out = schema(Outer)
    props = out["properties"]
    assert out["required"] == ["factId"] and out["additionalProperties"] is False
    assert props["factId"] == {"type": "string", "maxLength": 64, "description": "which fact"}
    assert props["count"] == {"type": "integer", "minimum": 1, "maximum": 200}
    assert props["tags"]["maxItems"] == 5 and props["tags"]["items"]["maxLength"] == 20
    assert props["kind"] == {"enum": ["fact", "note"]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"factId": "x", "count": 500}, out)
