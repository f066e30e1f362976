"""Filter flags (--path, --tag, --where, --after, --before) give the filters the inline
syntax gives."""

from __future__ import annotations

from typing import Any

import pytest

from engram.errors import InvalidInputError
from engram.search.query import parse_query
from engram.search.query_flags import filter_syntax
from engram.store.filters import Filters


@pytest.mark.parametrize(
    ("flags", "inline"),
    [
        ({"paths": ["People/"]}, "path:People/"),
        ({"paths": ["People/", "Projects/"]}, "path:People/ path:Projects/"),
        ({"paths": ["My Notes/2024"]}, 'path:"My Notes/2024"'),
        ({"tags": ["person"]}, "tag:person"),
        ({"tags": ["#area/business", "project"]}, "tag:#area/business tag:project"),
        ({"where": ["type:decision"]}, "type:decision"),
        ({"where": ["status: in review"]}, 'status:"in review"'),
        ({"where": ["url:https://x.org/a"]}, 'url:"https://x.org/a"'),
        ({"after": "2024-05"}, "after:2024-05"),
        ({"before": "2024"}, "before:2024"),
        ({"after": "2024-05-01", "before": "2024-06-01"}, "after:2024-05-01 before:2024-06-01"),
        (
            {"paths": ["Daily/"], "tags": ["idea"], "where": ["type:note"], "after": "2024"},
            "path:Daily/ tag:idea type:note after:2024",
        ),
        ({}, ""),
    ],
)
def test_flags_parse_to_the_filters_of_the_inline_syntax(
    flags: dict[str, Any], inline: str
) -> None:
    got = parse_query("coffee " + filter_syntax(**flags))
    want = parse_query("coffee " + inline)
    assert got.filters == want.filters
    assert got.text == "coffee" and got.terms == ("coffee",)
    assert (got.filters == Filters()) == (inline == "")


def test_relative_dates_become_iso_dates() -> None:
    assert filter_syntax(after="today").startswith("after:20")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"where": ["decision"]}, "--where expects KEY:VALUE"),
        ({"where": ["type:"]}, "--where expects KEY:VALUE"),
        ({"where": ["1x:y"]}, "--where expects KEY:VALUE"),
        ({"paths": ['a"b']}, "--path values cannot contain double quotes"),
        ({"tags": [" "]}, "--tag needs a value"),
        ({"after": "last tuesday"}, "--after: expects a date"),
        ({"before": "13/2024"}, "--before: expects a date"),
    ],
)
def test_bad_flags_name_the_flag(flags: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        filter_syntax(**flags)
