"""Where a tool's work runs: on one worker thread, with the Engram the composition root (the
CLI's `engram mcp`) hands over. That Engram sends what the warm daemon (`engram serve`) can do
to it when one is live for this index, and runs the rest in this process (models load once
either way); the tools never choose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import anyio
import anyio.to_thread

from engram.errors import EngramError, storage_error

if TYPE_CHECKING:
    from engram.service.daemon import DaemonClient, DaemonEngram

T = TypeVar("T")


@dataclass(frozen=True)
class Options:
    """How `engram mcp` was started."""

    vault: str | None = None  # memory tools act on this vault (name or folder); else default
    agent: str = "mcp"  # createdBy of the facts this server stores
    use_daemon: bool = True


class Gateway:
    """Runs tool work on the worker thread, and owns the facade."""

    def __init__(self, make_engram: Callable[[], DaemonEngram], options: Options) -> None:
        self.options = options
        self._make_engram = make_engram
        self._engram: DaemonEngram | None = None
        self._vault_name: str | None = None
        self._limiter: anyio.CapacityLimiter | None = None

    def close(self) -> None:
        """Close the facade if one was opened."""
        if self._engram is not None:
            self._engram.close()
            self._engram = None

    def _facade(self) -> DaemonEngram:
        if self._engram is None:
            self._engram = self._make_engram()
        return self._engram

    async def run(self, fn: Callable[[DaemonEngram], T]) -> T:
        """Run `fn(facade)` on the single worker thread (the facade and llama.cpp are not
        meant for concurrent calls; the event loop stays free)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        try:
            return await anyio.to_thread.run_sync(lambda: fn(self._facade()), limiter=self._limiter)
        except Exception as exc:  # a full disk or a read-only folder: a tool error in one line
            index = self._engram.settings.db_path if self._engram is not None else None
            error = storage_error(exc, index)
            if error is None or error is exc:
                raise
            raise error from None

    def daemon(self) -> DaemonClient | None:
        """The live daemon of this index (what the plugin reported to it lives there)."""
        return self._facade().daemon()

    async def vault_name(self) -> str | None:
        """The collection name of this server's vault, or None when there is none yet."""
        if self._vault_name is None:
            try:
                self._vault_name = await self.run(lambda e: e.vault_name(self.options.vault))
            except EngramError:
                return None
        return self._vault_name
