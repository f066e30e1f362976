"""The bearer token of a vault's daemon: kept with keyring, else in a 0600 file.

One token per vault (keyring service `engram`, user name = the vault's absolute path). Where
keyring has no working backend (headless Linux without a secret service, containers), the token
lives in `<data dir>/tokens/<hash of the vault path>.token`, readable by the owner only.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from engram.secrets import KeyringLike, Secret, secret_file

SERVICE = "engram"
TOKEN_BYTES = 32


def new_token() -> str:
    """32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


class TokenStore(Secret):
    """Get, create and rotate the token of one vault."""

    def __init__(self, data_dir: Path, vault: Path, keyring: KeyringLike | None) -> None:
        self.vault = str(vault)
        file = secret_file(data_dir / "tokens", self.vault, ".token")
        super().__init__(SERVICE, self.vault, file, keyring)

    def get_or_create(self) -> str:
        """The stored token; a new one is made and stored the first time."""
        return self.get() or self.rotate()

    def rotate(self) -> str:
        """Store a fresh token (the old one stops working) and return it."""
        token = new_token()
        self.set(token)
        return token
