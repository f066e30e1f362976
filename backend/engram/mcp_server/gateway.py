"""Where a tool's work runs: on one worker thread, with the Engram the composition root (the
CLI's `engram mcp`) hands over. That Engram sends what the warm daemon (`engram serve`) can do
to it when one is live for this index, and runs the rest in this process (models load once
either way); the tools never choose.

A tool names the facade method it calls (`await gw.run(Engram.recall, q, n=n)`): the type
checker holds the call to that method's signature, and at run time the gateway calls the
method of that name on the facade it holds (the daemon-backed one here; the daemon's own
Engram when `engram serve` answers MCP itself, server/mcp.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import anyio
import anyio.to_thread

from engram import codec
from engram.errors import EngramError, storage_error

if TYPE_CHECKING:
    from engram.service.daemon import DaemonEngram
    from engram.service.engram import Engram

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class Options:
    """How the MCP server was started."""

    vault: str | None = None  # memory tools act on this vault (name or folder); else default
    agent: str = "mcp"  # createdBy of the facts this server stores
    use_daemon: bool = True
    tools: str = "lean"  # the tool set listed: a profile name (tools.PROFILES) or "all"


@dataclass(frozen=True)
class ActiveNote:
    """What the gateway knows of the note open in Obsidian: whether a daemon answers (the
    plugin reports to it), its pid and collection, and the note (None: none reported)."""

    daemon: bool
    pid: int | None = None
    collection: str | None = None
    note: Mapping[str, Any] | None = None


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

    async def run(
        self, fn: Callable[Concatenate[Engram, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`fn(facade, *args, **kwargs)` on the single worker thread (the facade and llama.cpp
        are not meant for concurrent calls; the event loop stays free)."""
        result: T = await self._call(fn.__name__, args, kwargs)
        return result

    async def _call(self, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)

        def work() -> Any:
            return getattr(self._facade(), name)(*args, **kwargs)

        try:
            return await anyio.to_thread.run_sync(work, limiter=self._limiter)
        except Exception as exc:  # a full disk or a read-only folder: a tool error in one line
            index = self._engram.settings.db_path if self._engram is not None else None
            error = storage_error(exc, index)
            if error is None or error is exc:
                raise
            raise error from None

    async def status(self) -> dict[str, Any]:
        """Status as the process that answers sees it, with `servedBy` saying which one."""
        served = await self._call("served_status", (), {})
        if served.daemon_status is not None:
            by = {"daemon": True, "pid": served.daemon_pid, "port": served.daemon_port}
            return {"servedBy": by, **served.daemon_status}
        status: dict[str, Any] = codec.encode(served.status)
        return {"servedBy": {"daemon": False}, **status}

    async def active_note(self) -> ActiveNote:
        """The note Obsidian last reported open to the live daemon."""
        daemon, note = await self._call("active_note", (), {})
        if daemon is None:
            return ActiveNote(False)
        return ActiveNote(True, daemon.pid, daemon.collection, note)

    async def vault_name(self) -> str | None:
        """The collection of this server's vault, or None when there is none yet."""
        if self._vault_name is None:
            from engram.service.engram import Engram

            try:
                self._vault_name = await self.run(Engram.vault_name, self.options.vault)
            except EngramError:
                return None
        return self._vault_name

    def daemon_used(self) -> bool:
        """Whether calls may go to a live daemon (`--no-daemon` says no)."""
        return self.options.use_daemon
