"""Which failures are a full disk or a refused write, and the one line each becomes."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from engram.errors import NoSpaceError, NotWritableError, storage_error
from engram.store.db import sqlite_module
from engram.vault import atomic


@pytest.mark.parametrize(
    ("code", "kind", "condition"),
    [
        (errno.ENOSPC, NoSpaceError, "no space left on the device"),
        (errno.EDQUOT, NoSpaceError, "the disk quota is used up"),
        (errno.EFBIG, NoSpaceError, "the file would be larger than this system allows"),
        (errno.EROFS, NotWritableError, "the file system is read-only"),
        (errno.EACCES, NotWritableError, "permission denied"),
        (errno.EPERM, NotWritableError, "the operation is not permitted"),
    ],
)
def test_storage_conditions_are_one_line_naming_the_file(
    code: int, kind: type, condition: str
) -> None:
    found = storage_error(OSError(code, "os text", "/vault/Note.md"))
    assert isinstance(found, kind) and found.message == f"/vault/Note.md: {condition}"


@pytest.mark.parametrize("code", [errno.ENOENT, errno.EISDIR, errno.EIO, errno.ENAMETOOLONG])
def test_other_os_errors_are_not_storage_errors(code: int) -> None:
    assert storage_error(OSError(code, "os text", "/vault/Note.md")) is None
    assert storage_error(ValueError("no")) is None


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_write_to_a_full_device_is_named_after_the_file_asked_for(tmp_path: Path) -> None:
    """/dev/full answers every write with ENOSPC, as a full disk does, naming no file."""
    with (
        pytest.raises(OSError) as caught,
        atomic.name_errors(tmp_path / "Note.md"),
        open("/dev/full", "wb", buffering=0) as device,
    ):
        device.write(b"a fact")
    assert caught.value.errno == errno.ENOSPC
    found = storage_error(caught.value)
    assert isinstance(found, NoSpaceError)
    assert found.message == f"{tmp_path / 'Note.md'}: no space left on the device"


def test_a_full_sqlite_database_is_a_full_index(tmp_path: Path) -> None:
    sqlite = sqlite_module()
    conn = sqlite.connect(tmp_path / "index.sqlite")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA max_page_count = 2")  # SQLite's own "database or disk is full"
    with pytest.raises(sqlite.OperationalError) as caught:
        conn.execute("INSERT INTO t VALUES (zeroblob(100000))")
    found = storage_error(caught.value, tmp_path / "index.sqlite")
    assert isinstance(found, NoSpaceError)
    assert found.message == (
        f"the index {tmp_path / 'index.sqlite'}: no space left on the device"
        " (SQLite: database or disk is full)"
    )


def test_a_read_only_sqlite_database_refuses_writes(tmp_path: Path) -> None:
    sqlite = sqlite_module()
    path = tmp_path / "index.sqlite"
    sqlite.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    conn = sqlite.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite.OperationalError) as caught:
        conn.execute("INSERT INTO t VALUES (1)")
    found = storage_error(caught.value)
    assert isinstance(found, NotWritableError) and found.code == "not_writable"
    assert found.message.startswith("the index: writing is not allowed (SQLite: attempt to")
    other = sqlite.connect(":memory:")
    with pytest.raises(sqlite.OperationalError) as caught:
        other.execute("SELECT * FROM missing")
    assert storage_error(caught.value) is None  # an SQL error is not the disk's
