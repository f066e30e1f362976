"""What a connection remembers about the index (words' document counts, embedding coverage)
holds only while the index is unchanged."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.store import search, vectors
from engram.store.db import Database

WORDS = ("cat", "dog", "bird", "fish")
# (which connection, what): add a note with these words, delete the oldest note, or count
_step = st.tuples(
    st.sampled_from(("reader", "writer")),
    st.one_of(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(lambda w: ("add", w)),
        st.just(("delete", [])),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(lambda w: ("count", w)),
    ),
)


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(_step, min_size=1, max_size=25))
def test_remembered_counts_always_equal_a_fresh_count(steps: list[tuple[str, tuple]]) -> None:
    """Whichever connection writes (another: `data_version`; this one: `total_changes`), a
    connection's counts equal counting afresh."""
    with tempfile.TemporaryDirectory() as tmp:
        dbs = {name: Database(Path(tmp) / "i.sqlite") for name in ("reader", "writer")}
        try:
            for who, (what, words) in steps:
                conn = dbs[who].conn
                if what == "add":
                    _add(conn, " ".join(words))
                elif what == "delete":
                    conn.execute(
                        "DELETE FROM documents_fts WHERE rowid = (SELECT min(rowid) FROM"
                        " documents_fts)"
                    )
                    conn.execute("DELETE FROM documents WHERE id = (SELECT min(id) FROM documents)")
                else:
                    matches = [f'"{w}"' for w in words]
                    assert search.term_document_counts(conn, matches) == search._count(
                        conn, matches
                    )
        finally:
            for db in dbs.values():
                db.close()


def _add(conn: object, text: str) -> None:
    n = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM documents").fetchone()[0]  # type: ignore[attr-defined]
    conn.execute(  # type: ignore[attr-defined]
        "INSERT INTO documents (id, collection, path, title, hash, mtime_ns, size, indexed_at)"
        " VALUES (?, 'c', ?, '', '', 0, 0, '')",
        (n, f"{n}.md"),
    )
    conn.execute(  # type: ignore[attr-defined]
        "INSERT INTO documents_fts (rowid, title, headings, props, body, cjk)"
        " VALUES (?, '', '', '', ?, '')",
        (n, text),
    )


def test_counts_are_remembered_between_queries() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "i.sqlite")
        try:
            _add(db.conn, "cat dog")
            assert search.term_document_counts(db.conn, ['"cat"']) == (1, [1])
            statements: list[str] = []
            db.conn.set_trace_callback(statements.append)
            assert search.term_document_counts(db.conn, ['"cat"']) == (1, [1])
            db.conn.set_trace_callback(None)
            assert not any("count(*)" in s for s in statements)
        finally:
            db.close()


def test_coverage_is_remembered_until_either_connection_changes_the_index() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        reader, writer = (Database(Path(tmp) / "i.sqlite") for _ in range(2))
        try:
            _add(writer.conn, "cat")
            doc_hash = writer.conn.execute("SELECT hash FROM documents").fetchone()[0]

            def chunk(conn: Any, seq: int) -> None:
                conn.execute(
                    "INSERT INTO chunks (doc_hash, seq, start, end, start_line, end_line,"
                    " text_hash, tokens) VALUES (?, ?, 0, 1, 1, 1, ?, 1)",
                    (doc_hash, seq, f"t{seq}"),
                )

            assert vectors.coverage(reader.conn)["chunks"] == 0
            statements: list[str] = []
            reader.conn.set_trace_callback(statements.append)
            assert vectors.coverage(reader.conn)["chunks"] == 0
            reader.conn.set_trace_callback(None)
            assert not any("count(*)" in s for s in statements)
            chunk(writer.conn, 1)  # another connection commits
            assert vectors.coverage(reader.conn)["chunks"] == 1
            chunk(reader.conn, 2)  # this one changes it
            assert vectors.coverage(reader.conn) == vectors._coverage(reader.conn)
            assert vectors.coverage(reader.conn)["chunks"] == 2
        finally:
            reader.close()
            writer.close()


def test_slow_coverage_counts_are_given_again_for_ten_times_their_cost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Counting coverage at 500,000 passages takes seconds: the counts are reused for
    COVERAGE_REUSE times what they cost, and counted afresh after; quick counts never are."""
    from engram.service import semantic

    clock = [100.0]
    calls: list[int] = []
    cost = [2.0]

    def counting(conn: Any) -> dict[str, int]:
        calls.append(1)
        clock[0] += cost[0]
        return {"n": len(calls)}

    monkeypatch.setattr(semantic, "monotonic", lambda: clock[0])
    monkeypatch.setattr(semantic.vectors, "coverage", counting)
    service = semantic.SemanticService.__new__(semantic.SemanticService)
    service._coverage = None
    assert service._counted_coverage(None) == {"n": 1}
    clock[0] += semantic.COVERAGE_REUSE * 2.0 - 2.5  # still within 10 x 2 s of the start
    assert service._counted_coverage(None) == {"n": 1}
    clock[0] += 1.0
    assert service._counted_coverage(None) == {"n": 2}
    cost[0] = 0.01  # quick counting: asked again, counted again
    clock[0] += 100.0
    assert service._counted_coverage(None) == {"n": 3}
    assert service._counted_coverage(None) == {"n": 4}
