"""Migrations that carry rows over: m008 moves the hashes Engram wrote from the derived facts
table to fact_written; m018 gives each stored tag its key."""

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


def test_m018_gives_every_stored_tag_the_key_a_new_index_gives_it() -> None:
    from engram.store.tags import tag_key

    conn = sqlite_module().connect(":memory:", isolation_level=None)
    upto = migrations.MIGRATIONS.index(migrations.m018_tag_keys)
    for migrate in migrations.MIGRATIONS[:upto]:  # an index made before m018
        migrate(conn)
    conn.execute(
        "INSERT INTO documents (id, collection, path, title, hash, mtime_ns, size, indexed_at)"
        " VALUES (1, 'v', 'a.md', 'A', 'h', 0, 0, '')"
    )
    spellings = ["Project", "project/Alpha", "PROJECT/alpha/", "Straße", "ÉTÉ", "日本", "/"]
    conn.executemany(
        "INSERT INTO tags (doc_id, tag, line) VALUES (1, ?, ?)",
        [(tag, line) for line, tag in enumerate(spellings, 1)],
    )
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.executemany(
        "INSERT INTO _migrations VALUES (?, '')",
        [(m.__name__,) for m in migrations.MIGRATIONS[:upto]],
    )
    assert migrations.apply(conn)[0] == "m018_tag_keys"
    rows = list(conn.execute("SELECT tag, key FROM tags ORDER BY line"))
    assert rows == [(tag, tag_key(tag)) for tag in spellings]
    assert [r[1] for r in rows][:3] == ["project", "project/alpha", "project/alpha"]
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "tags_tag" not in indexes and not migrations.pending(conn)
