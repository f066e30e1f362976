"""Where a tool's work runs: in the warm daemon (`engram serve`) when one is live for this
index, else in this process on one worker thread (models load once either way).

The daemon client is handed in by the composition root (the CLI), so this package needs no
HTTP code of its own; anything it raises that is a `ConnectionError` means "the daemon is
gone", and the call is answered in-process instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from engram.errors import EngramError

if TYPE_CHECKING:
    from engram.service import Document, Engram

T = TypeVar("T")
log = logging.getLogger("engram.mcp")


class Daemon(Protocol):
    """What the MCP server asks of the running daemon (engram.cli.remote.DaemonClient)."""

    pid: int | None
    port: int
    collection: str | None

    def query(
        self,
        query: str,
        n: int | None,
        collections: tuple[str, ...],
        min_score: float,
        full: bool,
        mode: str = "query",
        **options: Any,
    ) -> dict[str, Any]:
        """`POST /v1/query`."""
        ...

    def get(self, ref: str, from_line: int | None, max_lines: int | None) -> Document:
        """`GET /v1/documents`."""
        ...

    def status(self) -> dict[str, Any]:
        """`GET /v1/status`."""
        ...

    def active_note(self) -> dict[str, Any] | None:
        """`GET /v1/active-note`."""
        ...

    def recall(self, query: str, n: int, **options: Any) -> list[dict[str, Any]]:
        """`POST /v1/recall`."""
        ...

    def add_fact(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`POST /v1/facts`."""
        ...

    def memory_context(self, query: str | None, profile: str, budget: int) -> dict[str, Any]:
        """`POST /v1/memory/context`."""
        ...

    def deep_search(self, query: str, n: int) -> dict[str, Any]:
        """`POST /v1/memory/deep-search`."""
        ...


@dataclass(frozen=True)
class Options:
    """How `engram mcp` was started."""

    vault: str | None = None  # memory tools act on this vault (name or folder); else default
    agent: str = "mcp"  # createdBy of the facts this server stores
    use_daemon: bool = True


class Gateway:
    """Runs tool work through the daemon or in-process, and owns the in-process facade."""

    def __init__(
        self,
        make_engram: Callable[[], Engram],
        find_daemon: Callable[[], Daemon | None],
        options: Options,
    ) -> None:
        self.options = options
        self._make_engram = make_engram
        self._find_daemon = find_daemon
        self._engram: Engram | None = None
        self._vault_name: str | None = None
        self._limiter: anyio.CapacityLimiter | None = None

    def close(self) -> None:
        """Close the in-process facade if one was opened."""
        if self._engram is not None:
            self._engram.close()
            self._engram = None

    def _facade(self) -> Engram:
        if self._engram is None:
            self._engram = self._make_engram()
        return self._engram

    async def local(self, fn: Callable[[Engram], T]) -> T:
        """Run `fn(facade)` on the single worker thread (the facade and llama.cpp are not
        meant for concurrent calls; the event loop stays free)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
        return await anyio.to_thread.run_sync(lambda: fn(self._facade()), limiter=self._limiter)

    def daemon(self) -> Daemon | None:
        """The live daemon of this index, unless `--no-daemon`."""
        if not self.options.use_daemon:
            return None
        try:
            return self._find_daemon()
        except (OSError, ValueError, EngramError):
            return None

    async def remote(self, fn: Callable[[Daemon], T], memory: bool = False) -> tuple[T] | None:
        """`(fn(daemon),)` when a daemon is live (and, for `memory`, serves this server's
        vault); None when the call must run in-process instead."""
        d = self.daemon()
        if d is None:
            return None
        if memory and d.collection != await self.vault_name():
            return None
        try:
            return (await anyio.to_thread.run_sync(lambda: fn(d)),)
        except ConnectionError as exc:
            log.info("the daemon stopped answering (%s); working in-process", type(exc).__name__)
            return None

    async def either(
        self, remote: Callable[[Daemon], T], local: Callable[[Engram], T], memory: bool = False
    ) -> T:
        """Through the daemon when possible, else in-process."""
        got = await self.remote(remote, memory)
        return got[0] if got is not None else await self.local(local)

    async def vault_name(self) -> str | None:
        """The collection name of this server's vault, or None when there is none yet."""
        if self._vault_name is None:
            try:
                self._vault_name = await self.local(lambda e: e.vault_name(self.options.vault))
            except EngramError:
                return None
        return self._vault_name
