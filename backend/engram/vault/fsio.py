"""File I/O that never damages a note: atomic writes, paths confined to a root, safe reads."""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engram.errors import ConflictError, InvalidInputError

__all__ = ["ConflictError", "UnsafePathError", "atomic_write", "atomic_write_text", "read_note"]

BINARY_SNIFF_BYTES = 8192


class UnsafePathError(InvalidInputError):
    """A path escapes its root (`..`, absolute path, symlink pointing outside)."""


@dataclass(frozen=True)
class ReadResult:
    """Decoded text of a file plus what went wrong while decoding it."""

    text: str
    data: bytes
    sha256: str
    warning: str | None = None


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of bytes: the content identity used everywhere."""
    return hashlib.sha256(data).hexdigest()


def is_binary(data: bytes) -> bool:
    """True when the first bytes contain a NUL: text files never do."""
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def decode(data: bytes) -> tuple[str, str | None]:
    """UTF-8 text (BOM stripped); invalid bytes become U+FFFD with a warning."""
    try:
        text = data.decode("utf-8")
        warning = None
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warning = f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced"
    return text.removeprefix("\ufeff"), warning


def read_note(path: str | Path, max_bytes: int | None = None) -> ReadResult:
    """Read a text file for indexing; binary data or more than `max_bytes` raise ValueError.

    A symlink is refused (OSError ELOOP): the scanner never lists one, so a file that became
    a symlink after the scan must not be followed out of the vault.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise ValueError(f"over the {max_bytes:,}-byte limit (max_file_bytes); it grew")
    if is_binary(data):
        raise ValueError("binary file (contains NUL bytes)")
    text, warning = decode(data)
    return ReadResult(text=text, data=data, sha256=sha256_hex(data), warning=warning)


def safe_join(root: Path, relative: str) -> Path:
    """`root/relative`, refusing anything that would land outside `root`."""
    if not relative or "\x00" in relative:
        raise UnsafePathError("empty path or NUL byte in path")
    rel = Path(relative)
    if rel.is_absolute() or rel.drive:
        raise UnsafePathError(f"absolute path not allowed: {relative}")
    root_real = root.resolve()
    target = (root_real / rel).resolve()
    if target != root_real and root_real not in target.parents:
        raise UnsafePathError(f"path escapes the vault: {relative}")
    return target


def atomic_write(path: Path, data: bytes, expected_sha256: str | None = None) -> str:
    """Write bytes atomically (temp file in the same folder, fsync, rename); return the new hash.

    With `expected_sha256`, refuse with ConflictError when the file on disk no longer has that
    hash ("" means the file must not exist yet).
    """
    if expected_sha256 is not None:
        current = sha256_hex(path.read_bytes()) if path.exists() else ""
        if current != expected_sha256:
            raise ConflictError(f"{path.name} changed since it was read; not overwritten")
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return sha256_hex(data)


def atomic_write_text(path: Path, text: str, expected_sha256: str | None = None) -> str:
    """`atomic_write` for UTF-8 text."""
    return atomic_write(path, text.encode("utf-8"), expected_sha256)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
