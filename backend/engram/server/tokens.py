"""The bearer token of a vault's daemon: kept with keyring, else in a 0600 file.

One token per vault (keyring service `engram`, user name = the vault's absolute path). Where
keyring has no working backend (headless Linux without a secret service, containers), the token
lives in `<data dir>/tokens/<hash of the vault path>.token`, readable by the owner only.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any, Protocol

SERVICE = "engram"
TOKEN_BYTES = 32
log = logging.getLogger("engram.server")


class KeyringLike(Protocol):
    """The two calls we need from a keyring backend."""

    def get_password(self, service: str, username: str) -> str | None:
        """The stored secret, or None."""
        ...

    def set_password(self, service: str, username: str, password: str) -> None:
        """Store a secret."""
        ...


def new_token() -> str:
    """32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


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


class TokenStore:
    """Get, create and rotate the token of one vault."""

    def __init__(self, data_dir: Path, vault: Path, keyring: KeyringLike | None) -> None:
        self.vault = str(vault)
        self.file = (
            data_dir / "tokens" / (hashlib.sha256(self.vault.encode()).hexdigest()[:24] + ".token")
        )
        self.keyring = keyring

    @property
    def kind(self) -> str:
        """Where the token lives: "keyring" or "file"."""
        return "keyring" if self.keyring is not None else "file"

    def get(self) -> str | None:
        """The stored token, or None when there is none yet."""
        if self.keyring is not None:
            try:
                return self.keyring.get_password(SERVICE, self.vault) or None
            except Exception as exc:
                log.warning("keyring unavailable (%s); using the token file", type(exc).__name__)
                self.keyring = None
        try:
            text = self.file.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        return text or None

    def get_or_create(self) -> str:
        """The stored token; a new one is made and stored the first time."""
        return self.get() or self.rotate()

    def rotate(self) -> str:
        """Store a fresh token (the old one stops working) and return it."""
        token = new_token()
        if self.keyring is not None:
            try:
                self.keyring.set_password(SERVICE, self.vault, token)
                return token
            except Exception as exc:
                log.warning("keyring unavailable (%s); using the token file", type(exc).__name__)
                self.keyring = None
        write_private(self.file, token + "\n")
        return token


def write_private(path: Path, text: str) -> None:
    """Write a file atomically with mode 0600 (temp file in the same folder, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
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
