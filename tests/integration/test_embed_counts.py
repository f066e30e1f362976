"""Status's embedding counts are kept by triggers (migration m022), never counted per status;
after any sequence of edits, deletes, updates, embeds, model switches, rebuilds, cleanups and
raw writes a store function might forget (INSERT OR REPLACE, OR IGNORE, a moved key), the kept
counts equal counting the tables afresh.

CI runs a fixed, derandomized set of sequences. For a longer random run:
    ENGRAM_COUNTS_EXAMPLES=2000 python -m pytest tests/integration/test_embed_counts.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import config
from engram.models.fake import FakeEmbedder
from engram.service import Engram
from engram.store import migrations, vectors
from engram.store.db import Database

EXAMPLES = int(os.environ.get("ENGRAM_COUNTS_EXAMPLES", "0"))
PROFILE = settings(
    max_examples=EXAMPLES or 60,
    derandomize=not EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# paragraphs shared between notes, so passages share texts and notes share contents
PARAGRAPHS = tuple(
    " ".join(f"{word}{i}" for i in range(n))
    for word, n in (("alpha", 40), ("beta", 12), ("gamma", 60), ("delta", 5), ("omega", 30))
)
NOTES = ("a.md", "Sub/b.md")
ROOTS = ("v", "w")  # two collections: the same content under two documents
DIMS = (8, 12)  # two fake models: a switch drops every vector

_raw = st.sampled_from(
    (
        "INSERT OR REPLACE INTO embeddings SELECT text_hash, vector_id FROM embeddings LIMIT 1",
        "INSERT OR IGNORE INTO embeddings SELECT text_hash, vector_id FROM embeddings LIMIT 1",
        "DELETE FROM embeddings WHERE text_hash = (SELECT min(text_hash) FROM embeddings)",
        "UPDATE OR IGNORE embeddings SET text_hash = (SELECT max(text_hash) FROM chunks)"
        " WHERE text_hash = (SELECT min(text_hash) FROM embeddings)",
        "UPDATE OR REPLACE embeddings SET text_hash = (SELECT max(text_hash) FROM embeddings)"
        " WHERE text_hash = (SELECT min(text_hash) FROM embeddings)",
        "INSERT OR REPLACE INTO embed_queue SELECT text_hash, 'x' FROM chunks"
        " UNION ALL SELECT text_hash, 'y' FROM chunks",  # each text replaced in the statement
        "INSERT OR IGNORE INTO embed_queue SELECT text_hash, 'x' FROM chunks LIMIT 3",
        "UPDATE embeddings SET text_hash = 'moved ' || text_hash"
        " WHERE text_hash = (SELECT max(text_hash) FROM embeddings)",
        "DELETE FROM chunked WHERE doc_hash = (SELECT max(doc_hash) FROM chunked)",
        "UPDATE chunked SET doc_hash = 'moved ' || doc_hash"
        " WHERE doc_hash = (SELECT min(doc_hash) FROM chunked)",
        "INSERT OR REPLACE INTO chunked (doc_hash, title) SELECT hash, '' FROM documents",
        "UPDATE documents SET hash = (SELECT max(hash) FROM documents)"
        " WHERE id = (SELECT min(id) FROM documents)",
        "UPDATE chunks SET text_hash = (SELECT min(text_hash) FROM chunks)"
        " WHERE id = (SELECT max(id) FROM chunks)",
        "UPDATE chunks SET text_hash = 'no vector' WHERE id = (SELECT max(id) FROM chunks)",
        "UPDATE OR IGNORE chunks SET doc_hash = (SELECT min(hash) FROM documents)"
        " WHERE id = (SELECT max(id) FROM chunks)",
        "DELETE FROM chunks WHERE id = (SELECT min(id) FROM chunks)",
    )
)
_write = st.tuples(
    st.just("write"),
    st.sampled_from(ROOTS),
    st.sampled_from(NOTES),
    st.lists(st.sampled_from(PARAGRAPHS), min_size=0, max_size=4),
)
_delete = st.tuples(st.just("delete"), st.sampled_from(ROOTS), st.sampled_from(NOTES))
_STEPS = {
    "write": _write,
    "update": st.just(("update",)),
    "embed": st.just(("embed",)),
    "sql": _raw.map(lambda sql: ("sql", sql)),
    "delete": _delete,
    "switch": st.just(("switch",)),
    "rebuild": st.just(("rebuild",)),
    "cleanup": st.just(("cleanup",)),
}
# edits and updates most often, so a note is edited again after its passages have vectors
_KINDS = ("write", "write", "update", "embed", "write", "update", "sql", "sql", "delete")
_step = st.sampled_from(_KINDS + tuple(_STEPS)).flatmap(lambda k: _STEPS[k])


def _engram(tmp: Path, dim: int) -> Engram:
    env = {
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
    }
    return Engram(config.resolve(env), embedder=FakeEmbedder(dim=dim, max_tokens=24))


def assert_counts_exact(conn: Any) -> None:
    """The kept counts equal a fresh count, and no row is kept for a content nothing has."""
    assert vectors.coverage(conn) == vectors.counted_coverage(conn)
    idle = conn.execute(
        "SELECT count(*) FROM embed_counts WHERE docs = 0 AND chunks = 0 AND chunked = 0"
    ).fetchone()[0]
    assert idle == 0


@PROFILE
@given(steps=st.lists(_step, min_size=10, max_size=30))
def test_kept_counts_equal_a_full_count_after_any_sequence(steps: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        dim = DIMS[0]
        e = _engram(tmp, dim)
        try:
            for root in ROOTS:
                (tmp / root).mkdir()
                e.collection_add(str(tmp / root), root)
            for step in steps:
                what = step[0]
                if what == "write":
                    path = tmp / step[1] / step[2]
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text("\n\n".join(step[3]), encoding="utf-8")
                elif what == "delete":
                    (tmp / step[1] / step[2]).unlink(missing_ok=True)
                elif what == "update":
                    e.update()
                elif what == "embed":
                    e.embed()
                elif what == "switch":
                    e.close()
                    dim = DIMS[1] if dim == DIMS[0] else DIMS[0]
                    e = _engram(tmp, dim)
                    e.update()
                    e.embed()
                elif what == "rebuild":
                    e.rebuild()
                elif what == "cleanup":
                    e.cleanup()
                else:
                    with e.db.write() as conn:
                        conn.execute(step[1])
                assert_counts_exact(e.db.conn)
                embeddings = e.status().embeddings
                assert embeddings.chunks == vectors.counted_coverage(e.db.conn)["chunks"]
        finally:
            e.close()


def test_the_migration_counts_an_index_made_before_it(tmp_path: Path) -> None:
    """An index embedded before m022 gets its counts when it opens, equal to a fresh count."""
    e = _engram(tmp_path, DIMS[0])
    root = tmp_path / "v"
    (root / "Sub").mkdir(parents=True)
    for i, note in enumerate(NOTES):
        (root / note).write_text("\n\n".join(PARAGRAPHS[i:]), encoding="utf-8")
    e.collection_add(str(root), "v")
    e.update()
    e.embed()
    (root / "a.md").write_text("new words", encoding="utf-8")
    e.update()  # one note chunked but not embedded
    with e.db.write() as conn:
        conn.execute("INSERT INTO embed_queue VALUES ('t', 'waiting')")
    expected = vectors.counted_coverage(e.db.conn)
    path = e.settings.db_path
    e.close()
    triggers = [s.split()[2] for s in migrations.M022_TRIGGERS.strip().split("\n\n")]
    db = Database(path)
    with db.write() as conn:
        for trigger in triggers:
            conn.execute(f"DROP TRIGGER {trigger}")
        for table in ("embed_counts", "embed_totals", "embed_replacing"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DELETE FROM _migrations WHERE name = 'm022_embed_counts'")
    db.close()
    db = Database(path)  # applies m022 again
    try:
        assert vectors.coverage(db.conn) == expected
        assert expected["documentsNotEmbedded"] == 1 and expected["queued"] == 1
        assert_counts_exact(db.conn)
    finally:
        db.close()


def test_status_reads_the_kept_counts_without_counting(tmp_path: Path) -> None:
    e = _engram(tmp_path, DIMS[0])
    try:
        root = tmp_path / "v"
        root.mkdir()
        (root / "a.md").write_text("\n\n".join(PARAGRAPHS), encoding="utf-8")
        e.collection_add(str(root), "v")
        e.update()
        e.embed()
        statements: list[str] = []
        e.db.conn.set_trace_callback(statements.append)
        state = e.embedding_state()
        e.db.conn.set_trace_callback(None)
        assert state.embedded == state.chunks > 0
        assert not any("count(" in s.lower() for s in statements)
    finally:
        e.close()
