"""The daemon stays answerable when local processes hold many connections without the token.

Any local process may connect to 127.0.0.1, and each open connection costs the daemon a file
descriptor. At the process's file limit (often 1,024) accept() fails and SQLite cannot open
a file, so nobody is answered. Hence:

- at most `limit` connections are open, well under the file limit (the rest is left to the
  index, the models, the watcher and the worker pipes): past it, a new connection closes the
  oldest one that has not sent a request yet (else the oldest idle one), never one being
  answered;
- a connection that has not sent complete request headers `header_seconds` after it opened,
  or after the first byte of its next request, is closed (idle keep-alive connections are
  closed by aiohttp's keepalive_timeout, bodies by the routes' body deadline);
- what was closed is logged as one line a minute at most, not one per connection.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

log = logging.getLogger("engram.server")
HEADER_SECONDS = 5.0
MAX_CONNECTIONS = 512
REPORT_SECONDS = 60.0


def connection_limit(open_files: int) -> int:
    """How many connections to keep open under a file limit of `open_files`: under half of
    it, so the daemon's own files (index, models, watcher, worker pipes: about 30 for a small
    vault without models) never run short, and closed connections have time to let go."""
    return max(16, min(MAX_CONNECTIONS, open_files // 2 - 64))


def open_file_limit() -> int:
    """This process's soft RLIMIT_NOFILE (a large number when unlimited)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else int(soft)


@dataclass
class _Conn:
    transport: asyncio.BaseTransport
    opened: float
    busy: int = 0  # requests of this connection being answered now
    requests: int = 0
    pending: float | None = None  # when bytes of a request not yet started arrived

    def late(self, cutoff: float) -> bool:
        """Its request's headers began before `cutoff`, or it opened then and sent nothing
        (an idle connection after an answer is aiohttp's keep-alive business)."""
        if self.pending is not None:
            return self.pending < cutoff
        return self.requests == 0 and self.opened < cutoff


class Connections:
    """The open connections of one listening socket, with their limits."""

    def __init__(self, limit: int, header_seconds: float = HEADER_SECONDS) -> None:
        self.limit = limit
        self.header_seconds = header_seconds
        self._open: dict[object, _Conn] = {}  # by aiohttp's protocol; oldest first
        self._closed_slow = 0
        self._closed_full = 0
        self._reported = 0.0

    def factory(self, make: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """A protocol factory that tracks what `make` (aiohttp's) builds."""
        return lambda: _Tracked(self, make())

    def opened(self, key: object, transport: asyncio.BaseTransport) -> None:
        """A connection was accepted: make room for it if the limit is reached."""
        now = asyncio.get_running_loop().time()
        self._open[key] = _Conn(transport, now)
        if len(self._open) <= self.limit:
            return
        self._closed_full += 1
        self._close(self._victim(key))

    def _victim(self, new: object) -> object:
        """Who makes room: a client that has had an answer (the plugin's keep-alive connection)
        is worth more than one that never asked anything; `new` itself if all are busy."""
        first = None
        for key, conn in self._open.items():  # oldest first; a flood's are found at once
            if conn.busy or key is new:
                continue
            if not conn.requests:
                return key
            first = key if first is None else first
        return new if first is None else first

    def closed(self, key: object) -> None:
        """A connection ended (either side closed it)."""
        self._open.pop(key, None)

    def received(self, key: object) -> None:
        """Bytes arrived: a request's headers are on their way unless one is being answered."""
        conn = self._open.get(key)
        if conn is not None and not conn.busy and conn.pending is None:
            conn.pending = asyncio.get_running_loop().time()

    def started(self, key: object) -> bool:
        """A request's headers are complete and it is being answered; False if untracked."""
        conn = self._open.get(key)
        if conn is None:
            return False
        conn.busy += 1
        conn.requests += 1
        conn.pending = None
        return True

    def finished(self, key: object) -> None:
        """The request is answered."""
        conn = self._open.get(key)
        if conn is not None:
            conn.busy -= 1

    def sweep(self, now: float) -> None:
        """Close connections that sent no complete request headers in time."""
        cutoff = now - self.header_seconds
        slow = [key for key, c in self._open.items() if not c.busy and c.late(cutoff)]
        for key in slow:
            self._close(key)
        self._closed_slow += len(slow)
        if (self._closed_slow or self._closed_full) and now - self._reported >= REPORT_SECONDS:
            why = [f"{self._closed_slow} sent no complete request within {self.header_seconds:g}s"]
            why += [f"{self._closed_full} made room (limit {self.limit} open)"]
            log.warning("closed connections since the last report: %s", "; ".join(why))
            self._closed_slow = self._closed_full = 0
            self._reported = now

    def _close(self, key: object) -> None:
        conn = self._open.pop(key, None)
        if conn is not None:
            conn.transport.close()


class _Tracked(asyncio.Protocol):
    """aiohttp's protocol for one connection, with the guard told what happens to it."""

    def __init__(self, guard: Connections, inner: asyncio.Protocol) -> None:
        self.guard = guard
        self.inner = inner

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inner.connection_made(transport)
        self.guard.opened(self.inner, transport)

    def data_received(self, data: bytes) -> None:
        self.guard.received(self.inner)
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.closed(self.inner)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


CONNECTIONS = web.AppKey("connections", Connections)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def track(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Mark the connection busy while its request is answered (outermost middleware)."""
    guard = request.app.get(CONNECTIONS)
    key = request.protocol
    if guard is None or not guard.started(key):
        return await handler(request)
    try:
        return await handler(request)
    finally:
        guard.finished(key)


class GuardedSite(web.BaseSite):
    """Serve `runner` on a bound socket through `guard`, with an accept loop of our own.
    asyncio's (3.11), out of files, logs a traceback per failed accept, goes on through the
    rest of its backlog and schedules a retry for each failure (270,031 tracebacks, 124 MB of
    log in about a minute); this one backs off and logs a line a minute at most."""

    def __init__(self, runner: web.BaseRunner, sock: socket.socket, guard: Connections) -> None:
        super().__init__(runner)
        self._sock = sock
        self._guard = guard
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def name(self) -> str:
        """The URL served."""
        host, port = self._sock.getsockname()[:2]
        return f"http://{host}:{port}"

    async def start(self) -> None:
        """Accept connections, and check their deadlines once a second."""
        await super().start()
        server = self._runner.server
        assert server is not None
        factory = self._guard.factory(server)
        accept, sweep = self._accept(factory), self._sweep()
        self._tasks = [asyncio.create_task(accept), asyncio.create_task(sweep)]

    async def stop(self) -> None:
        """Stop accepting (the runner then closes the open connections)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._sock.close()
        await super().stop()

    async def _accept(self, factory: Callable[[], asyncio.Protocol]) -> None:
        loop = asyncio.get_running_loop()
        failures, delay, reported = 0, 0.0, -REPORT_SECONDS
        while True:
            try:
                conn, _ = await loop.sock_accept(self._sock)
            except OSError as exc:  # out of files (EMFILE, ENFILE), of memory, an aborted one
                failures += 1
                delay = min(max(delay * 2, 0.05), 2.0)
                if loop.time() - reported >= REPORT_SECONDS:
                    log.warning("accepting a connection failed %d times (%s)", failures, exc)
                    failures, reported = 0, loop.time()
                await asyncio.sleep(delay)
                continue
            delay = 0.0
            try:
                await loop.connect_accepted_socket(factory, conn)
            except OSError:
                conn.close()

    async def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(1.0)
            self._guard.sweep(loop.time())
