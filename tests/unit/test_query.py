"""Query syntax: parsing, filters, and FTS5 expressions that never fail."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.search.bm25 import match_expression
from engram.search.query import QueryError, parse_query
from engram.store import migrations
from engram.store.db import sqlite_module


@pytest.mark.parametrize(
    ("raw", "terms", "phrases", "excluded", "prefixes"),
    [
        ("pricing tiers", ("pricing", "tiers"), (), (), ()),
        ("the pricing of the tiers", ("pricing", "tiers"), (), (), ()),
        ("the of and", ("the", "of", "and"), (), (), ()),  # only stopwords: keep them
        ('"usage based" pricing', ("pricing",), ("usage based",), (), ()),
        ('pricing -flat -"per seat"', ("pricing",), (), ("flat", "per seat"), ()),
        ("pric* tier", ("tier",), (), (), ("pric",)),
        ("Hello, world! (test)", ("Hello", "world", "test"), (), (), ()),
        ("a-b state-of-the-art", ("a-b", "state-of-the-art"), (), (), ()),
        ("!!! ??? ---", (), (), (), ()),
        ('unterminated "quote here', ("unterminated",), ("quote here",), (), ()),
    ],
)
def test_terms(
    raw: str,
    terms: tuple[str, ...],
    phrases: tuple[str, ...],
    excluded: tuple[str, ...],
    prefixes: tuple[str, ...],
) -> None:
    q = parse_query(raw)
    assert (q.terms, q.phrases, q.excluded, q.prefixes) == (terms, phrases, excluded, prefixes)


def test_filters() -> None:
    q = parse_query(
        "budget tag:#project path:Projects/ collection:notes type:decision "
        'status:"in review" after:2024-01 before:2025'
    )
    assert q.terms == ("budget",)
    f = q.filters
    assert f.tags == ("project",)
    assert f.path_prefixes == ("Projects/",)
    assert f.collections == ("notes",)
    assert f.fields == (("type", "decision"), ("status", "in review"))
    assert (f.after, f.before) == ("2024-01-01", "2025-01-01")


def test_urls_and_times_are_words_not_filters() -> None:
    q = parse_query("see https://example.com/x at 10:30")
    assert q.filters.fields == ()
    assert "example.com/x" in " ".join(q.terms) or q.terms


def test_a_colon_before_punctuation_is_prose_not_a_filter() -> None:
    """Pasted prose ("the court's judgement:” ...") must not turn into a field filter that
    matches no note."""
    q = parse_query("the final judgement:” was clear, as they are:’, said")
    assert q.filters.is_empty()
    assert "judgement" in q.terms and "judgement:”" in q.text


def test_bad_date_is_a_clear_error() -> None:
    with pytest.raises(QueryError, match="after: expects a date"):
        parse_query("x after:someday")


def test_cjk_runs() -> None:
    q = parse_query("東京大学 research")
    assert q.cjk == ("東京大学",)
    assert q.terms == ("research",)
    expr = match_expression(q) or ""
    assert '"東京" OR "京大" OR "大学"' in expr


def test_free_text_keeps_words_for_embedding() -> None:
    assert parse_query('pricing "usage based" -flat tag:x').text == "pricing usage based"


@pytest.fixture(scope="module")
def fts_conn():  # type: ignore[no-untyped-def]
    conn = sqlite_module().connect(":memory:", isolation_level=None)
    migrations.apply(conn)  # the real schema
    conn.execute("INSERT INTO documents_fts (title, body) VALUES ('t', 'some text AND OR NOT')")
    return conn


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=80))
def test_no_user_input_is_an_fts_syntax_error(fts_conn, raw: str) -> None:  # type: ignore[no-untyped-def]
    try:
        q = parse_query(raw)
    except QueryError:
        return
    expr = match_expression(q)
    if expr is not None:
        fts_conn.execute(
            "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?", (expr,)
        ).fetchall()


@pytest.mark.parametrize(
    "raw",
    [
        '"',
        "-",
        "*",
        "NOT",
        "AND OR",
        "a NEAR b",
        "col:",
        "^x",
        "{a b}",
        "title:x",
        '""',
        '-""',
        "(a OR",
        "x:y:z",
    ],
)
def test_operator_lookalikes_are_safe(fts_conn, raw: str) -> None:  # type: ignore[no-untyped-def]
    expr = match_expression(parse_query(raw))
    if expr is not None:
        fts_conn.execute("SELECT 1 FROM documents_fts WHERE documents_fts MATCH ?", (expr,))
