"""Where a tool's work runs. For `engram mcp`, on one worker thread, with the Engram the
composition root (the CLI) hands over: it sends what the warm daemon (`engram serve`) can do to
it when one is live for this index, and runs the rest in this process (models load once either
way). For `engram serve`'s own /mcp, on the daemon's threads (server/mcp.py). The tools never
choose.

A tool names the facade method it calls (`await gw.run(Engram.recall, q, n=n)`): the type
checker holds the call to that method's signature, and at run time the gateway calls the
method of that name on the facade it holds (the daemon-backed one here; the daemon's own
Engram when `engram serve` answers MCP itself, server/mcp.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

import anyio
import anyio.to_thread

from engram import codec
from engram.errors import EngramError, InvalidInputError, storage_error

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
    tools: str = "lean"  # the tool set listed: a profile (profiles.PROFILES) or tool names
    only_vault: bool = False  # note and graph tools act on the vault's collection alone


@dataclass(frozen=True)
class ActiveNote:
    """What the gateway knows of the note open in Obsidian: whether a daemon answers (the
    plugin reports to it), its pid and collection, and the note (None: none reported)."""

    daemon: bool
    pid: int | None = None
    collection: str | None = None
    note: Mapping[str, Any] | None = None


class Calls(Protocol):
    """Where facade calls run: `Worker` below for `engram mcp`, the daemon's reader, model
    and writer threads when `engram serve` answers MCP itself (server/mcp.py)."""

    async def call(self, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        """The facade method `name` called with these arguments."""

    async def status(self) -> dict[str, Any]:
        """Status as the process that answers sees it, with `servedBy` saying which."""

    async def active_note(self) -> tuple[int, str | None, Mapping[str, Any] | None] | None:
        """The daemon's pid and collection, and the note Obsidian last reported open to it
        (None: none reported); None when no daemon answers."""

    def close(self) -> None:
        """Release what the calls hold."""


class Gateway:
    """What the tools call: the facade's methods (through `Calls`), and this server's options."""

    def __init__(self, calls: Calls, options: Options) -> None:
        self.options = options
        self.calls = calls
        self._vault_name: str | None = None

    def close(self) -> None:
        """Release the calls' resources."""
        self.calls.close()

    def with_agent(self, agent: str) -> Gateway:
        """This gateway storing facts as created by `agent` (one MCP client of several)."""
        other = Gateway(self.calls, replace(self.options, agent=agent))
        other._vault_name = self._vault_name
        return other

    async def run(
        self, fn: Callable[Concatenate[Engram, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`fn(facade, *args, **kwargs)`, off the event loop, on the facade the calls hold."""
        result: T = await self.calls.call(fn.__name__, args, kwargs)
        return result

    async def send(self, fn: Callable[Concatenate[Engram, P], T], request: Any, **given: Any) -> T:
        """`fn` called with a request's fields (service/requests.py), those in `given`
        replaced: a request type's fields are its facade method's parameters, which
        tests/unit/test_operations.py holds for every declared operation."""
        fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}
        result: T = await self.calls.call(fn.__name__, (), fields | given)
        return result

    async def status(self) -> dict[str, Any]:
        """Status as the process that answers sees it, with `servedBy` saying which one."""
        return await self.calls.status()

    async def active_note(self) -> ActiveNote:
        """The note Obsidian last reported open to the live daemon."""
        found = await self.calls.active_note()
        return ActiveNote(False) if found is None else ActiveNote(True, *found)

    async def vault_name(self) -> str | None:
        """The collection of this server's vault, or None when there is none yet."""
        if self._vault_name is None:
            from engram.service.engram import Engram

            try:
                self._vault_name = await self.run(Engram.vault_name, self.options.vault)
            except EngramError:
                return None
        return self._vault_name

    async def collection(self, asked: str | None, note: str | None = None) -> str | None:
        """The collection a note or graph tool acts on: the one asked for, the one an
        engram:// note names (None), else the vault's. A server that serves one vault
        (`engram serve`'s /mcp) refuses another, as its HTTP routes do."""
        vault = await self.vault_name()
        if self.options.only_vault and asked is not None and asked != vault:
            raise InvalidInputError(
                f"this server acts on the collection {vault!r} only, not {asked!r}",
                hint="leave collection out, or use engram mcp for the other collections",
            )
        if asked:
            return asked
        if note and note.startswith("engram://"):
            return None
        return vault

    def daemon_used(self) -> bool:
        """Whether calls may go to a live daemon (`--no-daemon` says no)."""
        return self.options.use_daemon


class Worker:
    """`engram mcp`'s calls: one worker thread over the Engram the composition root makes
    (the daemon-backed one), opened on first use."""

    def __init__(self, make_engram: Callable[[], DaemonEngram]) -> None:
        self._make_engram = make_engram
        self._engram: DaemonEngram | None = None
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

    async def call(self, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        """Run the facade method on the single worker thread (the facade and llama.cpp are
        not meant for concurrent calls; the event loop stays free)."""
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
        """The daemon's `GET /v1/status` when it answers, else this process's status."""
        served = await self.call("served_status", (), {})
        if served.daemon_status is not None:
            by = {"daemon": True, "pid": served.daemon_pid, "port": served.daemon_port}
            return {"servedBy": by, **served.daemon_status}
        status: dict[str, Any] = codec.encode(served.status)
        return {"servedBy": {"daemon": False}, **status}

    async def active_note(self) -> tuple[int, str | None, Mapping[str, Any] | None] | None:
        """What the live daemon was told by the plugin."""
        daemon, note = await self.call("active_note", (), {})
        return None if daemon is None else (daemon.pid, daemon.collection, note)
