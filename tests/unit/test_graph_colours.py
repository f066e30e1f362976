"""Colour groups go into Obsidian's graph.json by inserting text: every other byte is kept."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.errors import InvalidInputError
from engram.graph import colours

GROUPS = colours.folder_groups("Engram", ["decisions", "lessons", "people"])
PERSON = """{
  "collapse-filter": false,
  "search": "tag:#work",
  "colorGroups": [
    {
      "query": "path:Journal",
      "color": {
        "a": 1,
        "rgb": 5431473
      }
    }
  ],
  "showTags": true,
  "scale": 0.8716
}"""


def removed(new: str, old: str) -> str:
    """`new` with the one inserted run of characters taken out (must give back `old`)."""
    i = 0
    while i < len(old) and new[i] == old[i]:
        i += 1
    return new[:i] + new[i + len(new) - len(old) :]


@pytest.mark.parametrize(
    "old",
    [
        PERSON,
        '{"showTags":true}',
        "{}",
        '{\n  "colorGroups": []\n}',
        '{"colorGroups":[],"search":"x"}\n',
        '{"search": "a \\"colorGroups\\": [] }", "x": {"colorGroups": [1]}}',
    ],
)
def test_only_groups_are_inserted_and_every_other_byte_is_kept(old: str) -> None:
    new = colours.add(old, colours.missing(old, GROUPS))
    assert removed(new, old) == old  # one insertion, nothing else changed
    data, before = json.loads(new), json.loads(old)
    queries = [g["query"] for g in data["colorGroups"]]
    assert queries[-3:] == [g.query for g in GROUPS]
    assert {k: v for k, v in data.items() if k != "colorGroups"} == {
        k: v for k, v in before.items() if k != "colorGroups"
    }
    assert data["colorGroups"][:-3] == before.get("colorGroups", [])
    assert colours.missing(new, GROUPS) == []  # idempotent
    assert colours.add(new, colours.missing(new, GROUPS)) == new


def test_a_new_file_and_refusals() -> None:
    assert json.loads(colours.add(None, GROUPS))["colorGroups"][0]["query"] == (
        'path:"Engram/decisions/"'
    )
    for bad in ("{oops", "[1]", '{"colorGroups": 3}'):
        with pytest.raises(InvalidInputError):
            colours.add(bad, GROUPS)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
            max_leaves=6,
        ),
        max_size=5,
    ).filter(lambda d: "colorGroups" not in d),
    st.sampled_from([None, 2, "\t"]),
)
def test_any_settings_file_keeps_its_bytes(data: dict[str, object], indent: object) -> None:
    old = json.dumps(data, indent=indent)  # type: ignore[arg-type]
    new = colours.add(old, colours.missing(old, GROUPS))
    assert removed(new, old) == old
    assert {k: v for k, v in json.loads(new).items() if k != "colorGroups"} == data
