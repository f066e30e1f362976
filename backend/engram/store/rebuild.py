"""The index file as a whole, for `engram rebuild`: what is carried over, exclusive use, swap.

Every table is either derived (made again from the files) or kept (carried over from the old
index, because no file can give it back). A test fails when a table is neither.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.store.db import Database, sqlite_module
from engram.store.vectors import VECTOR_TABLE, create_vector_table

DERIVED = frozenset(
    {
        "_migrations",
        "documents",
        "content",
        "documents_fts",
        "headings",
        "links",
        "tags",
        "fields",
        "blocks",
        "meta",  # apart from the embedding model and dimension, kept with the vectors
        "chunks",
        "embed_queue",
        "chunked",
        "vault_files",
        "facts",
        "graph_files",  # none in a new index: each graph file is written whole again
        "graph_dirty",
        "graph_tag_names",
        # status's embedding counts: the new index's triggers count what is carried over
        "embed_counts",
        "embed_totals",
        "embed_replacing",
    }
)
# sync bookkeeping, access and recall counts, the hashes Engram wrote to fact notes, model
# outputs, the vectors by passage text hash (and the vec0 table of vectors they point to), and
# the text extracted from PDFs by file hash (PDFium never reads an unchanged PDF again)
KEPT = (
    "sync_state",
    "sync_outbox",
    "sync_meta",
    "sync_conflicts",
    "sync_rejected",
    "fact_access",
    "fact_written",
    "fact_followups",
    "recall_log",
    "llm_cache",
    "embeddings",
    "extracts",
)
KEPT_META = ("embed_model", "embed_dim")
SIDE_FILES = ("-wal", "-shm", "-journal")


class InUseError(Exception):
    """Another connection has the index open."""


class Unreadable(Exception):
    """The old index file cannot be read (damaged, or not an index)."""


def remove(path: Path) -> None:
    """Delete an index file and its SQLite side files (a crashed rebuild's leftovers)."""
    for name in ("", *SIDE_FILES):
        with contextlib.suppress(FileNotFoundError):
            (path.parent / (path.name + name)).unlink()


def tables(conn: Any, schema: str = "main") -> set[str]:
    """Names of the ordinary and virtual tables of a schema (no FTS5/vec0 shadow tables)."""
    rows = conn.execute(f"SELECT name, sql FROM {schema}.sqlite_master WHERE type = 'table'")
    all_names = {r[0]: r[1] or "" for r in rows}
    virtual = [n for n, sql in all_names.items() if sql.upper().startswith("CREATE VIRTUAL")]
    shadow = {n for n in all_names for v in virtual if n.startswith(v + "_")}
    return {n for n in all_names if n not in shadow and not n.startswith("sqlite_")}


@dataclass(frozen=True)
class Carried:
    """What came over from the old index: rows per table, and the fact ids it knew."""

    rows: dict[str, int]
    fact_ids: frozenset[str]


def carry_over(conn: Any, old: Path) -> Carried:
    """Copy the kept tables' rows from the index file `old` (at the current schema: OldIndex
    saw to it) into this new, empty index; the old file is only read. Unreadable when it
    cannot be."""
    try:
        conn.execute("ATTACH DATABASE ? AS old", (str(old),))
    except sqlite_module().DatabaseError as exc:
        raise Unreadable(str(exc)) from None
    try:
        return _copy(conn)
    except sqlite_module().DatabaseError as exc:
        raise Unreadable(str(exc)) from None
    finally:
        conn.execute("DETACH DATABASE old")


def _copy(conn: Any) -> Carried:
    have = tables(conn, "old")
    rows: dict[str, int] = {}
    conn.execute("BEGIN")  # deferred: IMMEDIATE would want the old file's write lock too
    try:
        for table in KEPT:
            if table in have:
                cols = ", ".join(_shared_columns(conn, table))
                cur = conn.execute(
                    f"INSERT INTO main.{table} ({cols}) SELECT {cols} FROM old.{table}"
                )
                rows[table] = cur.rowcount
        dim = conn.execute("SELECT value FROM old.meta WHERE key = 'embed_dim'").fetchone()
        if VECTOR_TABLE in have and dim is not None:
            create_vector_table(conn, int(dim[0]))
            cur = conn.execute(
                f"INSERT INTO main.{VECTOR_TABLE} (rowid, embedding)"
                f" SELECT rowid, embedding FROM old.{VECTOR_TABLE}"
            )
            rows[VECTOR_TABLE] = cur.rowcount
        marks = ",".join("?" * len(KEPT_META))
        conn.execute(
            "INSERT OR REPLACE INTO main.meta (key, value) SELECT key, value FROM old.meta"
            f" WHERE key IN ({marks})",
            KEPT_META,
        )
        facts = frozenset(r[0] for r in conn.execute("SELECT id FROM old.facts"))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return Carried(rows, facts)


def _shared_columns(conn: Any, table: str) -> list[str]:
    mine = [r[1] for r in conn.execute(f"PRAGMA main.table_info({table})")]
    theirs = {r[1] for r in conn.execute(f"PRAGMA old.table_info({table})")}
    return [c for c in mine if c in theirs]


def fact_ids(conn: Any) -> set[str]:
    """Every fact id in the index."""
    return {r[0] for r in conn.execute("SELECT id FROM facts")}


def queue_deletes(conn: Any, ids: set[str]) -> int:
    """Queue a Convex delete for facts whose notes are gone, as the `sync_fact_deleted` trigger
    does when an update drops a fact's row (a rebuild never had the row to drop)."""
    queued = 0
    for fact_id in sorted(ids):
        cur = conn.execute(
            "INSERT INTO sync_outbox (vault, fact_id, kind, op_id, created_at)"
            " SELECT vault, ?1, 'delete', lower(hex(randomblob(16))),"
            " strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
            " FROM (SELECT vault FROM sync_state WHERE fact_id = ?1"
            "       UNION ALL SELECT vault FROM sync_outbox WHERE fact_id = ?1)"
            " WHERE EXISTS (SELECT 1 FROM sync_state WHERE fact_id = ?1 AND deleted = 0)"
            "    OR EXISTS (SELECT 1 FROM sync_outbox WHERE fact_id = ?1 AND parked = 0)"
            " LIMIT 1",
            (fact_id,),
        )
        queued += cur.rowcount
    return queued


class OldIndex:
    """The index a rebuild replaces: it keeps answering reads while the new one is built, its
    writes are held off (a write would land in a file about to be replaced), and it is swapped
    out in one rename once nothing else has it open."""

    def __init__(self, path: Path, busy_ms: int = 2000) -> None:
        """InUseError while another process has the index open; Unreadable when damaged."""
        self.path = path
        self._mod = sqlite_module()
        self._busy = busy_ms / 1000
        self._exclusive().close()  # nobody else has it open now
        try:
            Database(path).close()  # the current schema: migrations write, so before the hold
        except self._mod.DatabaseError as exc:
            raise Unreadable(str(exc)) from None
        self._conn: Any = self._mod.connect(str(path), isolation_level=None, timeout=self._busy)
        self._conn.execute("BEGIN IMMEDIATE")
        self._version = self._data_version()

    def _exclusive(self) -> Any:
        """A connection with the file to itself: in WAL mode every open connection holds a
        shared lock, so an exclusive one is refused while any process has the index open."""
        conn = self._mod.connect(str(self.path), isolation_level=None, timeout=self._busy)
        try:
            conn.execute("PRAGMA locking_mode = EXCLUSIVE")
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("COMMIT")  # the lock stays: exclusive mode never gives it back
        except self._mod.DatabaseError as exc:
            conn.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise InUseError(str(exc)) from None
            raise Unreadable(str(exc)) from None
        return conn

    def _data_version(self) -> int:
        """Changes whenever another connection commits to the file."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def replace_with(self, new: Path) -> None:
        """Rename the sealed index `new` over this one, holding this file exclusively across
        the rename so no process opens its WAL for the new file. InUseError (nothing replaced)
        when another process has it open, or wrote to it between the hold and the swap."""
        conn = self._conn
        conn.execute("COMMIT")
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        try:
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("COMMIT")
        except self._mod.OperationalError as exc:
            raise InUseError(str(exc)) from None
        if self._data_version() != self._version:
            raise InUseError("the index was written to during the rebuild")
        conn.execute("PRAGMA journal_mode = DELETE")  # checkpoint and remove the old WAL
        os.replace(new, self.path)
        self.close()
        _fsync(self.path.parent)

    def close(self) -> None:
        """Let go of the old file (a rebuild that failed leaves it as it was)."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None


def seal(path: Path) -> None:
    """Make a closed index one self-contained, synced file (no WAL beside it)."""
    conn = sqlite_module().connect(str(path), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")
    finally:
        conn.close()
    _fsync(path)


def replace_missing(new: Path, old: Path) -> None:
    """Put the sealed index `new` where there is no usable index: side files left beside a
    missing or damaged one go first (a stale WAL would be replayed into the new index)."""
    for suffix in SIDE_FILES:
        with contextlib.suppress(FileNotFoundError):
            (old.parent / (old.name + suffix)).unlink()
    os.replace(new, old)
    _fsync(old.parent)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
