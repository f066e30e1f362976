"""One daemon per index and per vault: exclusive `flock`s held for the daemon's lifetime.

The kernel drops a flock when the process holding it exits, however it exits (SIGKILL, a
crash), so a lock never goes stale and needs no cleanup. Both lock files are in the data dir,
not in the vault: a sync tool may replace a file in the vault by another one (a new inode
that nobody locks) or carry it to another machine, where it would mean nothing.

- the index: `<data dir>/<index>.server.lock`;
- the vault: `<data dir>/locks/<hash of the vault's resolved path>.vault.lock`.

The holder writes who it is (pid, vault, index, url) into its lock file, so that a daemon it
refuses can name it and a client can tell a discovery file of the holder from a stale one.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engram.secrets import private_dir, secret_file

# A client probing a lock holds it (shared) for microseconds; a daemon starting at that very
# moment tries again for this long before it concludes another daemon holds it.
ACQUIRE_SECONDS = 0.3


def index_lock_path(data_dir: Path, index: str) -> Path:
    """The lock of an index's daemon slot (also taken by `engram rebuild`)."""
    return data_dir / f"{index}.server.lock"


def vault_lock_path(data_dir: Path, vault: Path) -> Path:
    """The lock of a vault's daemon slot, keyed by the vault's resolved path."""
    return secret_file(data_dir / "locks", str(vault.resolve()), ".vault.lock")


class DaemonLock:
    """An exclusive, process-lifetime lock on one file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, wait: float = ACQUIRE_SECONDS) -> bool:
        """Take the lock; False when another process holds it (after `wait` seconds)."""
        import fcntl  # POSIX only, like the daemon

        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.02)
        os.ftruncate(fd, 0)  # the last holder's description is not ours
        self._fd = fd
        return True

    def describe(self, holder: Mapping[str, Any]) -> None:
        """Say who holds the lock (read by `holder`); written in place, the inode is the lock."""
        if self._fd is None:
            return
        data = json.dumps(dict(holder)).encode()
        os.pwrite(self._fd, data, 0)  # then cut: a reader never finds the file empty
        os.ftruncate(self._fd, len(data))

    def release(self) -> None:
        """Give the lock back (closing the file releases it)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def held(path: Path) -> bool:
    """Is the lock at `path` held by some process now? (A shared probe, never waiting.)"""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def holder(path: Path, wait: float = 0.0) -> dict[str, Any] | None:
    """What the holder of the lock wrote about itself; None when nothing (yet) or not held.
    `wait` gives a holder that took the lock an instant ago time to write it."""
    deadline = time.monotonic() + wait
    while True:
        if not held(path):
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and data:
            return data
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)
