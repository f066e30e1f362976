"""`kind:` and negated filters in the query syntax, and the SQL they become (table-driven)."""

from __future__ import annotations

import sqlite3

import pytest

from engram.search.query import QueryError, parse_query
from engram.store.filters import Filters, where

PARSED = [
    ("x kind:note", {"kinds": ("note",)}),
    ("x kind:notes", {"kinds": ("note",)}),
    ("x kind:Memory", {"kinds": ("memory",)}),
    ("x kind:all", {"kinds": ("note", "memory")}),
    ("x kind:note kind:memory", {"kinds": ("note", "memory")}),
    ("x -kind:memory", {"kinds": ("note",)}),
    ("x -kind:note", {"kinds": ("memory",)}),
    ("x kind:all -kind:memory", {"kinds": ("note",)}),
    ("x -path:Engram/", {"not_path_prefixes": ("Engram/",)}),
    ('x -path:"Old notes/"', {"not_path_prefixes": ("Old notes/",)}),
    ('x path:"Old notes/"', {"path_prefixes": ("Old notes/",)}),
    ("x -tag:#draft", {"not_tags": ("draft",)}),
    ("x -type:decision", {"not_fields": (("type", "decision"),)}),
    ('x -status:"in review"', {"not_fields": (("status", "in review"),)}),
    ("x -collection:work -col:home", {"not_collections": ("work", "home")}),
]


@pytest.mark.parametrize(("query", "expected"), PARSED)
def test_kinds_and_negations_parse_into_filters(query: str, expected: dict[str, object]) -> None:
    q = parse_query(query)
    assert q.terms == ("x",) and q.excluded == ()  # never words to exclude
    assert q.filters == Filters(**expected)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("x kind:mine", "kind: expects note, memory or all"),
        ("x -kind:all", "leave nothing"),
        ("x kind:note -kind:note", "leave nothing"),
        ("x -after:2024", "write before:2024"),
        ("x -before:2024", "write after:2024"),
    ],
)
def test_bad_kind_and_date_negations_say_what_to_write(query: str, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        parse_query(query)


def test_plain_minus_words_stay_words() -> None:
    q = parse_query('-draft -"old plan" -re: x')
    assert q.excluded == ("draft", "old plan", "re:")
    assert q.filters == Filters()


ROWS = [
    ("v", "Home.md"),
    ("v", "Engram/decisions/a.md"),
    ("v", "Engram/daily/2026-01-01.md"),
    ("v", "Engramless.md"),
    ("w", "Engram/x.md"),  # another collection, no memory there
    ("v", "100%_done.md"),
]


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        (Filters(kinds=("note",), memory_paths=(("v", "Engram/"),)), {0, 3, 4, 5}),
        (Filters(kinds=("memory",), memory_paths=(("v", "Engram/"),)), {1, 2}),
        (Filters(kinds=("note", "memory"), memory_paths=(("v", "Engram/"),)), set(range(6))),
        (Filters(kinds=("note",)), set(range(6))),  # no vault keeps memory
        (Filters(kinds=("memory",)), set()),
        (Filters(not_path_prefixes=("Engram/",)), {0, 3, 5}),
        (Filters(not_path_prefixes=("100%_",)), {0, 1, 2, 3, 4}),
        (Filters(not_collections=("w",)), {0, 1, 2, 3, 5}),
    ],
)
def test_kind_and_negated_path_sql(filters: Filters, kept: set[int]) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE documents (id INTEGER PRIMARY KEY, collection TEXT, path TEXT)")
    conn.executemany(
        "INSERT INTO documents VALUES (?, ?, ?)", [(i, *r) for i, r in enumerate(ROWS)]
    )
    sql, params = where(filters)
    found = {r[0] for r in conn.execute(f"SELECT id FROM documents d WHERE 1 = 1{sql}", params)}
    assert found == kept
