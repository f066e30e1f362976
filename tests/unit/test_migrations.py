"""m008 moves the hashes Engram wrote from the derived facts table to fact_written."""

from __future__ import annotations

from engram.store import migrations
from engram.store.db import sqlite_module


def test_written_hashes_survive_the_move_to_fact_written() -> None:
    conn = sqlite_module().connect(":memory:", isolation_level=None)
    upto = migrations.MIGRATIONS.index(migrations.m008_fact_written)
    for migrate in migrations.MIGRATIONS[:upto]:  # an index made before m008
        migrate(conn)
    conn.execute(
        "INSERT INTO documents (id, collection, path, title, hash, mtime_ns, size, indexed_at)"
        " VALUES (1, 'v', 'a.md', 'A', 'h', 0, 0, ''), (2, 'v', 'b.md', 'B', 'h2', 0, 0, '')"
    )
    conn.execute(
        "INSERT INTO facts (id, doc_id, fact_type, lifecycle, importance, confidence, scope,"
        " created_at, updated_at, last_edited_by, written_hash) VALUES"
        " ('f1', 1, 'fact', 'active', 0.5, 0.5, 'g', '', '', 'system', 'abc'),"
        " ('f2', 2, 'fact', 'active', 0.5, 0.5, 'g', '', '', 'human', NULL)"
    )
    assert migrations.pending(conn)
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.executemany(
        "INSERT INTO _migrations VALUES (?, '')",
        [(m.__name__,) for m in migrations.MIGRATIONS[:upto]],
    )
    assert migrations.apply(conn)[0] == "m008_fact_written"
    assert list(conn.execute("SELECT id, sha256 FROM fact_written")) == [("f1", "abc")]
    columns = {r[1] for r in conn.execute("PRAGMA table_info(facts)")}
    assert "written_hash" not in columns and not migrations.pending(conn)
