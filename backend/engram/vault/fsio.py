"""Reading files safely and keeping paths inside their root (writes: `vault.atomic`)."""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from engram.errors import InvalidInputError

__all__ = ["UnsafePathError", "read_note"]

BINARY_SNIFF_BYTES = 8192
SETTLE_TRIES = 5  # reads of a file that keeps changing while it is read, then take the last
SETTLE_PAUSE_S = 0.01


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
        data = _read_settled(fh, max_bytes)
    if max_bytes is not None and len(data) > max_bytes:
        raise ValueError(f"over the {max_bytes:,}-byte limit (max_file_bytes); it grew")
    if is_binary(data):
        raise ValueError("binary file (contains NUL bytes)")
    text, warning = decode(data)
    return ReadResult(text=text, data=data, sha256=sha256_hex(data), warning=warning)


def read_bytes(path: str | Path, max_bytes: int) -> tuple[bytes, str]:
    """(bytes, sha256) of a binary file read for indexing (a PDF), settled as `read_note`
    reads notes; a symlink is refused, and more than `max_bytes` raises ValueError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        data = _read_settled(fh, max_bytes)
    if len(data) > max_bytes:
        raise ValueError(f"over the {max_bytes:,}-byte limit; it grew")
    return data, sha256_hex(data)


def _read_settled(fh: BinaryIO, max_bytes: int | None) -> bytes:
    """The file's bytes, read again while it changes under us: an editor saving in place
    (truncate, then write) must not leave its half-written state in the index."""
    for attempt in range(SETTLE_TRIES):
        before = os.fstat(fh.fileno())
        fh.seek(0)
        data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
        after = os.fstat(fh.fileno())
        same = (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)
        whole = len(data) == min(after.st_size, len(data) if max_bytes is None else max_bytes + 1)
        if same and whole:
            break
        if attempt + 1 < SETTLE_TRIES:
            time.sleep(SETTLE_PAUSE_S)
    return data


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
