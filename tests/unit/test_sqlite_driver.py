"""The SQLite driver as Engram sets it up."""

from __future__ import annotations

import ctypes
import importlib
import subprocess
import sys

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


def test_sqlite_is_left_as_it_is_when_a_connection_is_already_open() -> None:
    """Shutting SQLite down under an open connection is undefined: when code outside Engram
    opened one first, the setting is not changed (in a fresh process, where nothing ran)."""
    if sqlite_module().__name__ != "sqlean":
        pytest.skip("only sqlean's own copy of SQLite is reconfigured")
    script = (
        "import ctypes, importlib, sqlean\n"
        "other = sqlean.connect(':memory:')\n"
        "from engram.store.db import sqlite_module\n"
        "lib = ctypes.CDLL(importlib.import_module('sqlean._sqlite3').__file__)\n"
        "lib.sqlite3_memory_used.restype = ctypes.c_int64\n"
        "conn = sqlite_module().connect(':memory:')\n"
        "before = lib.sqlite3_memory_used()\n"
        "conn.execute('CREATE TABLE t (x)')\n"
        "conn.executemany('INSERT INTO t VALUES (?)', [(b'x' * 1000,)] * 2000)\n"
        "assert other.execute('SELECT 1').fetchone()[0] == 1\n"
        "assert lib.sqlite3_memory_used() > before, 'statistics were turned off'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
