"""Domain errors. Adapters turn them into exit codes, HTTP statuses and MCP errors."""

from __future__ import annotations

import errno
import os


class EngramError(Exception):
    """An error with a message a user can act on."""

    code = "error"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f"\nhint: {self.hint}" if self.hint else "")


class NotFoundError(EngramError):
    """Something named by the user does not exist; `suggestions` says what might be meant."""

    code = "not_found"

    def __init__(self, message: str, suggestions: list[str] | None = None) -> None:
        self.suggestions = suggestions or []
        hint = ("did you mean: " + ", ".join(self.suggestions)) if self.suggestions else None
        super().__init__(message, hint)


class InvalidInputError(EngramError):
    """The request is malformed (bad query syntax, bad argument)."""

    code = "invalid_input"


class ConflictError(EngramError):
    """The target changed since it was read, or already exists."""

    code = "conflict"


class UnavailableError(EngramError):
    """A capability is not available here (no model, no sqlite-vec, sync not configured)."""

    code = "unavailable"


class StorageError(EngramError):
    """A file or the index could not be written: the disk is full, or writing is refused."""


class NoSpaceError(StorageError):
    """No space left: a full disk, a disk quota or a file size limit (HTTP 507)."""

    code = "no_space"


class NotWritableError(StorageError):
    """A read-only file system, or no permission to write there (HTTP 403)."""

    code = "not_writable"


# errno -> (error type, the condition as a person reads it)
_OS_CONDITIONS: dict[int, tuple[type[StorageError], str]] = {
    errno.ENOSPC: (NoSpaceError, "no space left on the device"),
    errno.EDQUOT: (NoSpaceError, "the disk quota is used up"),
    errno.EFBIG: (NoSpaceError, "the file would be larger than this system allows"),
    errno.EROFS: (NotWritableError, "the file system is read-only"),
    errno.EACCES: (NotWritableError, "permission denied"),
    errno.EPERM: (NotWritableError, "the operation is not permitted"),
}
_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL = 3, 8, 10, 13  # primary codes
_ROOM_NEEDED = 1 << 20  # free bytes below which SQLite's I/O errors are a full disk's


def storage_error(exc: BaseException, index_file: object = None) -> StorageError | None:
    """The StorageError an OSError or a SQLite error stands for (None for any other error):
    one line naming the file and the condition. `index_file` names the index for SQLite's
    errors, which do not say which file they are about."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, OSError) and exc.errno in _OS_CONDITIONS:
        cls, condition = _OS_CONDITIONS[exc.errno]
        where = exc.filename if exc.filename is not None else "a file Engram was writing"
        return cls(f"{where}: {condition}")
    code = getattr(exc, "sqlite_errorcode", None)  # sqlite3 and sqlean errors alike
    if not isinstance(code, int):
        return None
    index = f"the index {index_file}" if index_file else "the index"
    if code & 0xFF == _SQLITE_FULL or (code & 0xFF == _SQLITE_IOERR and _full(index_file)):
        # a full disk fails SQLite's shared-memory file with an I/O error, not SQLITE_FULL
        return NoSpaceError(f"{index}: no space left on the device (SQLite: {exc})")
    if code & 0xFF in (_SQLITE_READONLY, _SQLITE_PERM):
        return NotWritableError(f"{index}: writing is not allowed (SQLite: {exc})")
    return None


def _full(path: object) -> bool:
    """Is the file system holding `path` (all but) full?"""
    if not path:
        return False
    try:
        st = os.statvfs(os.path.dirname(str(path)) or ".")
    except (OSError, AttributeError):  # no statvfs on Windows
        return False
    return st.f_bavail * st.f_frsize < _ROOM_NEEDED
