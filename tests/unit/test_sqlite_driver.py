"""The SQLite driver as Engram sets it up."""

from __future__ import annotations

import ctypes
import importlib

import pytest

from engram.store.db import sqlite_module


def test_sqlean_keeps_no_memory_statistics() -> None:
    """SQLite's memory statistics take one process-wide mutex per allocation, which two
    searching threads contend for; in sqlean's private copy they are off before any
    connection opens, so allocating leaves the counter where it was."""
    mod = sqlite_module()
    if mod.__name__ != "sqlean":
        pytest.skip("only sqlean's own copy of SQLite is reconfigured")
    lib = ctypes.CDLL(importlib.import_module("sqlean._sqlite3").__file__)
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    conn = mod.connect(":memory:")
    before = lib.sqlite3_memory_used()
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [(b"x" * 1000,)] * 2000)
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 2000
    assert lib.sqlite3_memory_used() == before
    conn.close()
