"""store/db.py's batched write: what a batch committed stays, an error undoes only the open
batch, and nothing runs between batches while a transaction is open."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.store.db import Database


def test_committed_batches_stay_and_an_error_undoes_only_the_open_one(tmp_path: Path) -> None:
    db = Database(tmp_path / "index.sqlite")
    db.conn.execute("CREATE TABLE t (n INTEGER)")
    seen_between: list[bool] = []
    with pytest.raises(RuntimeError), db.batches() as batch:
        batch.conn.execute("INSERT INTO t VALUES (1)")
        batch.commit(lambda: seen_between.append(db.conn.in_transaction))
        batch.conn.execute("INSERT INTO t VALUES (2)")
        raise RuntimeError("the process fails mid-batch")
    assert seen_between == [False]
    assert [r[0] for r in db.conn.execute("SELECT n FROM t")] == [1]
    with db.batches() as batch:
        batch.conn.execute("INSERT INTO t VALUES (3)")
    assert not db.conn.in_transaction
    assert [r[0] for r in db.conn.execute("SELECT n FROM t ORDER BY n")] == [1, 3]
    db.close()
