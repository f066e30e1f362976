"""What a connection remembers about the index (words' document counts) holds only while the
index is unchanged. (Embedding coverage is kept by triggers instead: test_embed_counts.py.)"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.store import search
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
