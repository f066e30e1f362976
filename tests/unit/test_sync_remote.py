"""What sync takes from Convex: fact ids that may name a file, and pages of the right shape."""

from __future__ import annotations

from typing import Any

import pytest

from engram.sync.client import Malformed
from engram.sync.remote import id_problem, parse_page


@pytest.mark.parametrize(
    "fid",
    ["0123456789abcdef0123456789abcdef", "01J9ZQ4C7W8X", "café-42", "a b", "x" * 200, "a..b"],
)
def test_ids_that_may_name_a_file(fid: str) -> None:
    assert id_problem(fid) is None


@pytest.mark.parametrize(
    ("fid", "why"),
    [
        (None, "externalId is null, not a string"),
        (7, "externalId is the number 7, not a string"),
        ("", "externalId is empty"),
        ("   ", "externalId is empty"),
        ("x" * 201, "externalId is longer than 200 characters"),
        (".hidden", "externalId starts with a dot"),
        ("..", "externalId starts with a dot"),
        ("../../../../../tmp/escape-id", "externalId starts with a dot"),
        ("/../../a", "externalId contains '/'"),
        ("a\\b", "externalId contains '\\\\'"),
        ("C:x", "externalId contains ':'"),
        ("what?", "externalId contains '?'"),
        ("nul\x00", "externalId contains the control or invisible character '\\x00'"),
        ("line\nbreak", "externalId contains the control or invisible character '\\n'"),
        ("rtl\u202etxt", "externalId contains the control or invisible character '\\u202e'"),
        ("zero\u200bwidth", "externalId contains the control or invisible character '\\u200b'"),
        ("para\u2029", "externalId contains the control or invisible character '\\u2029'"),
    ],
)
def test_ids_that_may_not(fid: Any, why: str) -> None:
    assert id_problem(fid) == why


def test_a_page_of_the_right_shape() -> None:
    page = parse_page({"changes": [{"a": 1}], "nextCursor": "1:a", "isDone": False}, 1)
    assert page.changes == ({"a": 1},) and page.next_cursor == "1:a" and not page.is_done


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ([], "returned a list of 0, not a page of changes"),
        ({"changes": None, "nextCursor": "", "isDone": True}, "`changes` as null, not a list"),
        ({"changes": [{}, {}], "nextCursor": "", "isDone": True}, "2 changes when asked for 1"),
        ({"changes": [[]], "nextCursor": "", "isDone": True}, "a change that is a list of 0"),
        ({"changes": [], "nextCursor": "a\x00", "isDone": True}, '`nextCursor` as the string "a'),
        ({"changes": [], "nextCursor": "x" * 1001, "isDone": True}, "`nextCursor` as the string"),
        ({"changes": [], "nextCursor": "", "isDone": 1}, "`isDone` as the number 1, not true"),
        ({"changes": [], "nextCursor": ""}, "`isDone` as null, not true or false"),
    ],
)
def test_a_page_of_another_shape_is_malformed(value: Any, why: str) -> None:
    with pytest.raises(Malformed) as caught:
        parse_page(value, 1)
    assert why in caught.value.message and "\n" not in caught.value.message
