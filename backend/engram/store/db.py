"""Opening the index: the right SQLite module, pragmas, sqlite-vec, migrations."""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from engram.store import migrations

BUSY_TIMEOUT_MS = 10_000
CACHE_KIB = 64 * 1024  # per connection; large indexes insert far faster with a warm cache
# WAL pages before a checkpoint copies them into the database (SQLite's default is 1,000):
# a large update rewrites the same index pages in every batch, and each checkpoint copies
# (and syncs) them again; 40 MB between checkpoints cuts a cold update's commit time by a third
WAL_CHECKPOINT_PAGES = 10_000


@dataclass(frozen=True)
class Driver:
    """Which SQLite library is in use and what it can do."""

    name: str
    sqlite_version: str
    can_load_extensions: bool
    fts5: bool


def sqlite_module() -> ModuleType:
    """The stdlib sqlite3 when it can load extensions, else the sqlean drop-in."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return _fast_nulls(sqlite3)
    try:
        import sqlean
    except ImportError:
        return _fast_nulls(sqlite3)
    _untracked_allocations()
    return _fast_nulls(sqlean)


# SQLite's sqlite3_config option that turns its memory statistics on or off
SQLITE_CONFIG_MEMSTATUS = 9
# what SQLite holds with no connection open (8 bytes here; one in-memory connection, 64 KB)
IDLE_SQLITE_BYTES = 4096
_UNTRACKED: list[bool] = []  # set once the setting was tried in this process
_UNTRACKED_LOCK = threading.Lock()


def _untracked_allocations() -> None:
    """Turn off SQLite's memory statistics in sqlean's copy of SQLite, before its first
    connection (sqlite_module() runs before every connection is opened).

    With them on, SQLite's default, every allocation takes one mutex for the whole process
    to count itself, and FTS5 allocates for every row it scores: two threads searching at
    once spent their time handing that mutex back and forth. On the 5,000-note load-test
    vault two searching threads answered 208-250 queries/s with them, 282-296 without, and
    one thread 139 against 151. Engram reads none of these statistics.

    SQLite takes the setting only while shut down, and shutting it down with a connection
    open is undefined: so only sqlean's copy, which nothing but this module connects
    through, never a system SQLite that other code in the process (coverage, say) may hold
    open; and not when SQLite holds memory, which a connection opened elsewhere would. If
    the library does not expose the calls, the default stays.
    """
    with _UNTRACKED_LOCK:
        if _UNTRACKED:
            return
        _UNTRACKED.append(True)
        try:
            lib = ctypes.CDLL(importlib.import_module("sqlean._sqlite3").__file__)
            lib.sqlite3_memory_used.restype = ctypes.c_int64
            if lib.sqlite3_memory_used() > IDLE_SQLITE_BYTES:
                return
            if lib.sqlite3_shutdown() == 0:
                lib.sqlite3_config(SQLITE_CONFIG_MEMSTATUS, ctypes.c_int(0))
            lib.sqlite3_initialize()
        except (OSError, AttributeError, ImportError):
            pass


def _fast_nulls(mod: ModuleType) -> ModuleType:
    """Bind None parameters as NULL without the driver's adapter search.

    The sqlite3 module looks for an adapter for every parameter that is not an int, float,
    str or bytes; for None that search raises and discards two AttributeErrors, about 1.4 us
    a value with sqlean. Registering None's own (identity) adapter ends the search at once:
    a link row, mostly NULL, is written 5x faster, and a cold update of the 10,000-note
    benchmark stores its 221,000 links in ~1.5 s less. NULL is still bound as NULL.
    """
    if mod.__name__ not in _FAST_NULLS:
        mod.register_adapter(type(None), _as_is)
        _FAST_NULLS.add(mod.__name__)
    return mod


_FAST_NULLS: set[str] = set()  # driver modules whose None adapter is registered


def _as_is(value: None) -> None:
    return value


_CONNECTION_CLASSES: dict[str, type] = {}


def _connection_class(mod: ModuleType) -> type:
    """The driver's Connection with room for what a connection remembers (`index_memo`)."""
    cls = _CONNECTION_CLASSES.get(mod.__name__)
    if cls is None:
        cls = _CONNECTION_CLASSES[mod.__name__] = type("Connection", (mod.Connection,), {})
    return cls


def index_memo(conn: Any) -> dict[str, Any] | None:
    """What this connection has worked out about the index as it is now, emptied as soon as
    the index changed: a commit by another connection (`PRAGMA data_version`) or any change
    by this one (`total_changes`). None for a connection Database did not open (no room)."""
    room = getattr(conn, "__dict__", None)
    if room is None:
        return None
    version = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
    kept = room.get("index_memo")
    if kept is None or kept[0] != version:
        kept = room["index_memo"] = (version, {})
    return kept[1]


def driver_info() -> Driver:
    """Describe the SQLite library this process uses (for `engram doctor`)."""
    mod = sqlite_module()
    conn = mod.connect(":memory:")
    try:
        fts5 = True
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        except Exception:
            fts5 = False
        return Driver(
            name=mod.__name__,
            sqlite_version=str(conn.execute("select sqlite_version()").fetchone()[0]),
            can_load_extensions=hasattr(conn, "enable_load_extension"),
            fts5=fts5,
        )
    finally:
        conn.close()


class Batch:
    """The open transaction of `Database.batches`."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def commit(self, between: Callable[[], None] | None = None) -> None:
        """Commit what is done so far (and run `between` outside any transaction), then
        begin the next transaction."""
        self.conn.execute("COMMIT")
        if between is not None:
            between()
        self.conn.execute("BEGIN IMMEDIATE")


class Database:
    """One index file: a connection per thread, WAL mode, migrated on open.

    SQLite connections are not shared across threads; each thread that touches the index
    (the event loop's executor, the watcher) gets its own, opened lazily.
    """

    def __init__(self, path: Path, *, load_vec: bool = True) -> None:
        self.path = path
        self.load_vec = load_vec
        self.vec_error: str | None = None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[Any] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        private_files(path)
        with self.read() as conn:
            behind = migrations.pending(conn)
        if behind:
            with self.write() as conn:
                migrations.apply(conn)

    @property
    def conn(self) -> Any:
        """This thread's connection (opened on first use)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @property
    def vec_available(self) -> bool:
        """True when sqlite-vec loaded into the connection."""
        _ = self.conn
        return self.vec_error is None and self.load_vec

    def _open(self) -> Any:
        mod = sqlite_module()
        conn = mod.connect(
            str(self.path),
            isolation_level=None,
            check_same_thread=False,
            factory=_connection_class(mod),
        )
        conn.row_factory = mod.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")  # index b-trees stay in memory
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
        if self.load_vec:
            self.vec_error = _load_vec(conn)
        return conn

    @contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction (BEGIN IMMEDIATE): committed on success, rolled back on error."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def batches(self) -> Iterator[Batch]:
        """A long write in several transactions (BEGIN IMMEDIATE): `Batch.commit` ends one and
        begins the next, so readers see progress and other writers get a turn; the last is
        committed at the end, and the open one rolled back on error."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield Batch(conn)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[Any]:
        """A read transaction: one consistent snapshot for several queries."""
        conn = self.conn
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close every connection this object opened."""
        with self._lock:
            for conn in self._all:
                with suppress(Exception):
                    conn.close()
            self._all.clear()
        self._local = threading.local()


def private_files(path: Path) -> None:
    """The index and its WAL and shared-memory files, readable by the owner only: they hold
    the text of every note. A new index is created 0600 (SQLite gives its -wal and -shm
    files the database's mode); an older, wider one is tightened."""
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for file in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        with suppress(FileNotFoundError):
            if file.stat().st_mode & 0o077:
                os.chmod(file, 0o600)


def vec_extension_path() -> str | None:
    """Where sqlite-vec's loadable extension is, found without importing the package
    (its __init__ imports numpy, which would add ~0.2 s to every command)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(Path(spec.submodule_search_locations[0]) / "vec0")


def _load_vec(conn: Any) -> str | None:
    """Load sqlite-vec; return why it failed, or None."""
    if not hasattr(conn, "enable_load_extension"):
        return "this Python's sqlite3 cannot load extensions (install sqlean-py)"
    path = vec_extension_path()
    if path is None:
        return "the sqlite-vec package is not installed"
    try:
        conn.enable_load_extension(True)
        conn.load_extension(path)
        conn.enable_load_extension(False)
    except Exception as exc:
        return f"sqlite-vec failed to load: {exc}"
    return None
