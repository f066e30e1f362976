"""The app's typed state: settings of this server, runtime state, and the keys to find them."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web

from engram.service import Engram

if TYPE_CHECKING:
    from engram.server.jobs import JobRunner
    from engram.server.sync_task import SyncLoop
    from engram.server.tokens import TokenStore
    from engram.server.watcher import Watcher

T = TypeVar("T")
MAX_BODY = 1024 * 1024


@dataclass(frozen=True)
class ServerConfig:
    """How this server was started."""

    vault: Path
    collection: str
    config_dir: str = ".obsidian"
    watch: bool = True
    index_on_start: bool = True
    sync: bool = True  # run Convex sync in the background when the vault has it set up
    debounce: float = 2.0
    max_body: int = MAX_BODY
    body_seconds: float = 30.0  # a body still incomplete after this is refused with 408
    # quick reads (keyword search, notes, status): one thread per core, so at load each query
    # runs at full speed in turn instead of all of them sharing the cores and finishing late
    readers: int = field(default_factory=lambda: min(max(os.cpu_count() or 2, 2), 8))
    model_readers: int = 2  # reads that may run a model (vsearch, query, recall): seconds each


@dataclass(frozen=True)
class ActiveNote:
    """The note open in Obsidian, as the plugin last reported it."""

    path: str
    selection: str
    cursor_line: int
    at: str


def now_iso() -> str:
    """UTC now, ISO 8601 to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Runtime:
    """What changes while the server runs: the token, the active note, the last error."""

    def __init__(self, token: str, store: TokenStore | None = None) -> None:
        self.token = token
        self.store = store
        self.on_rotate: list[Callable[[str], None]] = []
        self.active_note: ActiveNote | None = None
        self.last_error: dict[str, str] | None = None
        self.started_at = now_iso()

    def record_error(self, message: str) -> None:
        """Remember a failure for `GET /v1/status` (never a secret: callers pass summaries)."""
        self.last_error = {"message": message, "at": now_iso()}

    def rotate(self) -> None:
        """Replace the token (in the store and in memory) and tell the discovery writers."""
        if self.store is None:
            from engram.errors import UnavailableError

            raise UnavailableError("this server has no token store to rotate")
        token = self.store.rotate()
        self.token = token
        for callback in self.on_rotate:
            callback(token)


ENGRAM = web.AppKey("engram", Engram)
CONFIG = web.AppKey("config", ServerConfig)
RUNTIME = web.AppKey("runtime", Runtime)
READER = web.AppKey("reader", ThreadPoolExecutor)
MODEL_READER = web.AppKey("model_reader", ThreadPoolExecutor)
JOBS: web.AppKey[JobRunner] = web.AppKey("jobs")
WATCHER: web.AppKey[Watcher | None] = web.AppKey("watcher")
SYNC: web.AppKey[SyncLoop] = web.AppKey("sync")


async def in_reader(app: web.Application, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a read (SQLite, files) on the reader threads, off the event loop."""
    return await _run(app[READER], functools.partial(fn, *args, **kwargs))


async def in_model_reader(
    app: web.Application, fn: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    """Run a read that may run a model (embedding the query, reranking, expansion) on threads
    of its own: two such requests taking seconds never hold up a keyword search."""
    return await _run(app[MODEL_READER], functools.partial(fn, *args, **kwargs))


async def _run(pool: ThreadPoolExecutor, call: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(pool, call)
