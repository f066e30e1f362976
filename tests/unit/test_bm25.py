"""BM25 scores: Lucene's IDF over FTS5's own term statistics, at every collection size."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.search import bm25
from engram.search.query import parse_query
from engram.store import migrations, search
from engram.store.db import sqlite_module
from engram.store.search import DEFAULT_WEIGHTS

K1, B = 1.2, 0.75  # FTS5's bm25() constants
# words the porter stemmer leaves alone, so the expected scores can count tokens directly
WORDS = ("cat", "dog", "bird", "fish", "sun", "moon")


@pytest.mark.parametrize(
    ("n_docs", "n_hit", "expected"),
    [
        (4, 2, math.log(2.0)),  # half the documents: FTS5's IDF would be 0
        (4, 4, math.log(1 + 0.5 / 4.5)),  # in every document: small, still above 0
        (1, 1, math.log(1 + 0.5 / 1.5)),
        (5183, 10, math.log(1 + 5173.5 / 10.5)),
        (3, 5, math.log(1 + 0.5 / 3.5)),  # counts out of step: as if found everywhere
    ],
)
def test_idf_stays_positive(n_docs: int, n_hit: int, expected: float) -> None:
    assert bm25.idf(n_docs, n_hit) == pytest.approx(expected)
    assert bm25.idf(n_docs, n_hit) > 0


def test_fts5_idf_is_floored_like_fts5() -> None:
    assert bm25.fts5_idf(4, 2) == 1e-6
    assert bm25.fts5_idf(100, 10) == pytest.approx(math.log(90.5 / 10.5))


@pytest.fixture
def conn() -> Iterator[Any]:
    c = sqlite_module().connect(":memory:", isolation_level=None)
    migrations.apply(c)
    yield c
    c.close()


def _load(conn: Any, docs: list[tuple[str, str]]) -> None:
    for i, (title, body) in enumerate(docs, 1):
        conn.execute(
            "INSERT INTO documents (id, collection, path, title, hash, mtime_ns, size,"
            " indexed_at) VALUES (?, 'c', ?, ?, ?, 0, 0, '')",
            (i, f"{i}.md", title, f"{i:064x}"),
        )
        conn.execute(
            "INSERT INTO documents_fts (rowid, title, headings, props, body, cjk)"
            " VALUES (?, ?, '', '', ?, '')",
            (i, title, body),
        )


def _expected(docs: list[tuple[str, str]], words: list[str]) -> dict[int, float]:
    """BM25 computed from scratch: Lucene's IDF, FTS5's column weights and length norm; a word
    written n times in the query counts n times (as stock BM25 sums over query tokens)."""
    w_title, w_body = DEFAULT_WEIGHTS[0], DEFAULT_WEIGHTS[3]
    lengths = [len(t.split()) + len(b.split()) for t, b in docs]
    avgdl = sum(lengths) / len(docs)
    out: dict[int, float] = {}
    for word in dict.fromkeys(words):
        n_hit = sum(1 for t, b in docs if word in t.split() + b.split())
        if not n_hit:
            continue
        idf = math.log(1 + (len(docs) - n_hit + 0.5) / (n_hit + 0.5))
        for i, (t, b) in enumerate(docs, 1):
            f = w_title * t.split().count(word) + w_body * b.split().count(word)
            if f:
                norm = K1 * (1 - B + B * lengths[i - 1] / avgdl)
                qtf = words.count(word)
                out[i] = out.get(i, 0.0) + qtf * idf * f * (K1 + 1) / (f + norm)
    return out


_text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.tuples(_text, _text), min_size=1, max_size=8),
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_scores_are_bm25_with_lucene_idf(docs: list[tuple[str, str]], words: list[str]) -> None:
    c = sqlite_module().connect(":memory:", isolation_level=None)
    try:
        migrations.apply(c)
        _load(c, docs)
        hits = bm25.ranked(c, parse_query(" ".join(words)), None, with_snippets=False).hits
        got = {h.id: -h.bm25 for h in hits}
    finally:
        c.close()
    expected = _expected(docs, words)
    assert set(got) == set(expected)
    for doc_id, score in expected.items():
        assert got[doc_id] == pytest.approx(score, rel=1e-9)
    ordered = [-h.bm25 for h in hits]
    assert ordered == sorted(ordered, reverse=True)


def test_words_match_in_every_column(conn: Any) -> None:
    """Expressions carry no column filter: a word is found whichever column holds it, and a
    column added to the full-text table would be searched too (this test then says so)."""
    columns = [r[1] for r in conn.execute("PRAGMA table_info(documents_fts)")]
    assert columns == ["title", "headings", "props", "body", "cjk"]
    _load(conn, [("", "")] * len(columns))
    for rowid, column in enumerate(columns, 1):
        conn.execute(f"UPDATE documents_fts SET {column} = 'moon' WHERE rowid = ?", (rowid,))
    for query in ("moon", "moo*", '"moon"', "moon -sun"):
        found = bm25.ranked(conn, parse_query(query), None, with_snippets=False).hits
        assert sorted(h.id for h in found) == [1, 2, 3, 4, 5], query


def test_required_phrase_and_exclusion_restrict_without_changing_scores(conn: Any) -> None:
    _load(conn, [("cat", "dog bird"), ("cat", "dog fish"), ("sun", "cat moon")])
    every = {h.id: h.bm25 for h in bm25.ranked(conn, parse_query("cat"), None, False).hits}
    not_fish = bm25.ranked(conn, parse_query("cat -fish"), None, False).hits
    assert {h.id: h.bm25 for h in not_fish} == {1: every[1], 3: every[3]}
    phrase = bm25.ranked(conn, parse_query('cat "dog bird"'), None, False).hits
    assert [h.id for h in phrase] == [1]


@pytest.mark.parametrize("query", ['"dog bird"', 'cat "dog bird"', "cat -fish", "cat dog -fish"])
def test_a_restricting_match_is_not_handed_to_fts5_as_rowids(conn: Any, query: str) -> None:
    """A required phrase or exclusion restricts the ranked rows with a second MATCH. Handed to
    FTS5 as a rowid constraint, it ran the whole ranking MATCH once per restricted row
    (seconds on a 5,000-note vault): every full-text scan in the plan must be a plain MATCH."""
    _load(conn, [("cat", "dog bird"), ("cat", "dog fish"), ("sun", "cat moon")])
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    assert bm25.ranked(conn, parse_query(query), None, False).hits is not None
    conn.set_trace_callback(None)
    ranking = [s for s in statements if "bm25(documents_fts" in s]
    assert ranking
    for sql in ranking:
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
        scans = [step for step in plan if "documents_fts VIRTUAL TABLE" in step]
        assert scans and all(":=" not in step for step in scans), plan


@pytest.mark.parametrize("words", ["cat", "cat dog"])
def test_filters_select_documents_without_changing_scores(conn: Any, words: str) -> None:
    _load(conn, [("cat", "dog bird"), ("cat", "dog fish"), ("sun", "cat moon")])
    every = {h.id: h.bm25 for h in bm25.ranked(conn, parse_query(words), None, False).hits}
    only = bm25.ranked(conn, parse_query(f"{words} path:2"), None, False).hits
    assert [(h.id, h.bm25) for h in only] == [(2, every[2])]


def test_a_long_query_keeps_its_most_telling_words() -> None:
    """Past MAX_TERMS words, the rarest and most repeated stay (weight: repeats x IDF)."""
    n = bm25.MAX_TERMS + 10
    words = [f"w{i}" for i in range(n)]
    # w0 is the most common word but written 30 times: 30 x its IDF beats any single rare word
    q = parse_query(" ".join(words + ["w0"] * 29))
    counts = {bm25.quote(w): 1 + i for i, w in enumerate(words)}
    counts[bm25.quote("w0")] = 200
    kept = bm25.prune_common_terms(q, 100_000, counts).terms
    assert len(kept) == bm25.MAX_TERMS
    assert "w0" in kept
    assert set(kept) == {"w0", *words[1 : bm25.MAX_TERMS]}  # the rarest of the others
    short = parse_query(" ".join(words[:5]))
    assert bm25.prune_common_terms(short, 100_000, counts).terms == short.terms


def test_repeated_query_words_are_counted_whatever_their_case() -> None:
    q = parse_query("Vitamin vitamin VITAMIN dose")
    assert q.terms == ("Vitamin", "dose")
    assert (q.count("vitamin"), q.count("Vitamin"), q.count("dose")) == (3, 3, 1)


def test_seen_is_the_idf_weighted_share_of_query_words_the_index_holds(conn: Any) -> None:
    """A query in another language than the notes shares few of their words: `seen` says how
    much of the query the keyword list could use at all (fusion trusts it accordingly)."""
    _load(conn, [("cat", "dog bird"), ("cat", "dog fish"), ("sun", "moon")])
    assert bm25.ranked(conn, parse_query("cat dog"), None, False).seen == 1.0
    assert bm25.ranked(conn, parse_query("zebra okapi"), None, False).seen == 0.0
    part = bm25.ranked(conn, parse_query("fish zebra"), None, False)
    absent = bm25.idf(3, 0)
    assert part.seen == pytest.approx(bm25.idf(3, 1) / (bm25.idf(3, 1) + absent))
    assert [h.id for h in part.hits] == [2]


_query_piece = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(WORDS).map(lambda w: w[:2] + "*"),
    st.sampled_from(WORDS).map(lambda w: "-" + w),
    st.tuples(st.sampled_from(WORDS), st.sampled_from(WORDS)).map(lambda p: f'"{p[0]} {p[1]}"'),
)


@settings(max_examples=80, deadline=None)
@given(
    docs=st.lists(st.tuples(_text, _text), min_size=1, max_size=8),
    pieces=st.lists(_query_piece, min_size=1, max_size=3),
)
def test_ranking_skips_a_restriction_only_when_it_would_keep_every_row(
    docs: list[tuple[str, str]], pieces: list[str]
) -> None:
    """A lone "phrase" is ranked without matching it a second time; any query gives the same
    hits and scores as one restricted by its whole match expression, and snippets found by
    one pass over the matches equal those looked up by rowid."""
    c = sqlite_module().connect(":memory:", isolation_level=None)
    try:
        migrations.apply(c)
        _load(c, docs)
        q = parse_query(" ".join(pieces))
        statements: list[str] = []
        c.set_trace_callback(statements.append)
        got = [(h.id, h.bm25) for h in bm25.ranked(c, q, None, with_snippets=False).hits]
        c.set_trace_callback(None)
        match = bm25.match_expression(q)
        if match is None or not got:
            return
        phrases = [(p, 1.0) for p in bm25.ranked_phrases(q)]
        every = search.bm25(c, phrases, match, q.filters, None)
        plain = search.bm25(c, phrases, None, q.filters, None)
        ranked = [s for s in statements if "bm25(documents_fts" in s]
        if bm25.restriction(q, phrases, match) is None:
            assert [h.id for h in every] == [h.id for h in plain]
            assert all("+id IN" not in s for s in ranked)
        assert {i for i, _ in got} == {h.id for h in every}
        ids = [i for i, _ in got]
        assert search.snippets(c, match, ids, scan=True) == search.snippets(c, match, ids)
    finally:
        c.close()


def test_m015_keeps_every_row_and_adds_prefix_indexes() -> None:
    """An index made before m015 holds the same rows after it, answers every query as before,
    and its table now keeps prefix indexes."""
    c = sqlite_module().connect(":memory:", isolation_level=None)
    upto = migrations.MIGRATIONS.index(migrations.m015_prefix_index)
    for migrate in migrations.MIGRATIONS[:upto]:
        migrate(c)
    c.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    c.executemany(
        "INSERT INTO _migrations VALUES (?, '')",
        [(m.__name__,) for m in migrations.MIGRATIONS[:upto]],
    )
    _load(c, [("cat", "dog bird"), ("catfish", "doggo fish"), ("sun", "cat moon"), ("b", "b bb")])
    queries = ["c*", "ca*", "cat*", "catf*", "d*", "b*", "cat -fish", '"dog bird"', "sun moon"]

    def answers() -> list[list[tuple[int, float, str]]]:
        return [
            [(h.id, h.bm25, h.snippet) for h in bm25.ranked(c, parse_query(q), None).hits]
            for q in queries
        ]

    before = answers()
    rows = c.execute("SELECT rowid, * FROM documents_fts ORDER BY rowid").fetchall()
    assert migrations.apply(c)[0] == "m015_prefix_index"  # and any added since
    assert answers() == before
    assert c.execute("SELECT rowid, * FROM documents_fts ORDER BY rowid").fetchall() == rows
    sql = c.execute("SELECT sql FROM sqlite_master WHERE name = 'documents_fts'").fetchone()[0]
    assert "prefix = '1 2 3'" in sql
    c.close()


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(st.tuples(_text, _text), min_size=1, max_size=12),
    pieces=st.lists(_query_piece, min_size=1, max_size=3),
    limit=st.integers(min_value=1, max_value=6),
)
def test_a_ranking_split_in_halves_across_threads_is_the_same_ranking(
    docs: list[tuple[str, str]], pieces: list[str], limit: int
) -> None:
    """On a large index the upper half of the ids is ranked on a helper thread with its own
    connection: the same hits, scores and order as one ranking, filters and all."""
    import tempfile
    from pathlib import Path

    from engram.store.db import Database

    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "i.sqlite", load_vec=False)
        try:
            _load(db.conn, docs)
            for text in (" ".join(pieces), " ".join(pieces) + " path:1"):
                q = parse_query(text)
                whole = bm25.ranked(db.conn, q, limit, with_snippets=False).hits
                old = bm25.SPLIT_MIN_DOCS, bm25.SPLIT_MIN_HITS
                bm25.SPLIT_MIN_DOCS, bm25.SPLIT_MIN_HITS = 0, 0
                try:
                    halves = bm25.ranked(db.conn, q, limit, False, connect=lambda: db.conn).hits
                finally:
                    bm25.SPLIT_MIN_DOCS, bm25.SPLIT_MIN_HITS = old
                assert [(h.id, h.bm25) for h in halves] == [(h.id, h.bm25) for h in whole]
        finally:
            db.close()
