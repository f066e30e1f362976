"""Secrets kept with `keyring`, else in 0600 files in the data dir.

Where keyring has no working backend (headless Linux without a secret service, containers),
a secret lives in a file of the data dir readable by the owner only (its name is a hash, so
it does not reveal the account). Used for the daemon's bearer tokens and the Convex sync
credentials.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger("engram")


class KeyringLike(Protocol):
    """The calls we need from a keyring backend."""

    def get_password(self, service: str, username: str) -> str | None:
        """The stored secret, or None."""
        ...

    def set_password(self, service: str, username: str, password: str) -> None:
        """Store a secret."""
        ...

    def delete_password(self, service: str, username: str) -> None:
        """Forget a secret."""
        ...


def system_keyring() -> KeyringLike | None:
    """The platform keyring, or None when only the fail/null backend is available."""
    try:
        import keyring
        from keyring.backends import fail

        backend: Any = keyring.get_keyring()
    except Exception:
        return None
    names = {type(b).__module__ for b in getattr(backend, "backends", [backend])}
    if isinstance(backend, fail.Keyring) or names <= {
        "keyring.backends.fail",
        "keyring.backends.null",
    }:
        return None
    try:
        if float(backend.priority) <= 0:
            return None
    except Exception:
        return None
    return backend


class Secret:
    """One secret (service + account) in the keyring, or in its 0600 file."""

    def __init__(self, service: str, account: str, file: Path, keyring: KeyringLike | None) -> None:
        self.service = service
        self.account = account
        self.file = file
        self.keyring = keyring

    @property
    def kind(self) -> str:
        """Where the secret lives: "keyring" or "file"."""
        return "keyring" if self.keyring is not None else "file"

    def get(self) -> str | None:
        """The stored secret, or None when there is none."""
        if self.keyring is not None:
            try:
                return self.keyring.get_password(self.service, self.account) or None
            except Exception as exc:
                self._fall_back(exc)
        try:
            text = self.file.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        return text or None

    def set(self, value: str) -> None:
        """Store the secret (replacing any before)."""
        if self.keyring is not None:
            try:
                self.keyring.set_password(self.service, self.account, value)
                return
            except Exception as exc:
                self._fall_back(exc)
        write_private(self.file, value + "\n")

    def delete(self) -> None:
        """Forget the secret wherever it is."""
        if self.keyring is not None:
            with contextlib.suppress(Exception):  # not there, or no backend
                self.keyring.delete_password(self.service, self.account)
        self.file.unlink(missing_ok=True)

    def _fall_back(self, exc: Exception) -> None:
        log.warning("keyring unavailable (%s); using a 0600 file", type(exc).__name__)
        self.keyring = None


def private_dir(path: Path) -> Path:
    """Make `path` a folder only its owner can enter (0700): missing parents are created
    0700 too (as the XDG spec asks), and the folder itself is tightened if it is wider."""
    missing = []
    folder = path
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    st = path.stat()
    if st.st_mode & 0o077 and st.st_uid == os.getuid():
        os.chmod(path, 0o700)
    return path


def secret_file(folder: Path, name: str, suffix: str) -> Path:
    """`folder/<hash of name><suffix>`: a file name that does not leak `name`."""
    return folder / (hashlib.sha256(name.encode()).hexdigest()[:24] + suffix)


def write_private(path: Path, text: str) -> None:
    """Write a file atomically with mode 0600 (temp file in the same folder, fsync, rename)."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
