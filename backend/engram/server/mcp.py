"""MCP at /mcp: the daemon answers the MCP tools over Streamable HTTP, so several agents share
one warm process (models loaded once) with the plugin and the CLI.

The MCP server itself (tools, Streamable HTTP) lives in mcp_server/, which nothing here
imports: the composition root (`engram serve`) hands `mount` a factory that makes it from the
daemon's `Calls` below. What this module owns is the daemon's side: the route, behind the same
middlewares as every route (bearer token, Host and Origin checks, body size), a small bridge
from aiohttp to the ASGI app the SDK's transport is, and the calls, run where the HTTP routes
run them (writes on the writer, model reads on the model threads, other reads on the readers).

A client that disconnects mid-call leaves nothing half-written: the call runs on to its end on
the daemon's threads (a write is atomic and indexed when it returns) and only its answer is
lost; the next call sees the write done.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from aiohttp import web

from engram import codec
from engram.errors import storage_error
from engram.server.middleware import CLIENT_CLOSED
from engram.server.routes import ACTIVE_NOTE_STALE_SECONDS, _age_seconds
from engram.server.state import (
    CONFIG,
    ENGRAM,
    JOBS,
    RUNTIME,
    in_model_reader,
    in_reader,
)
from engram.service.operations import by_name

log = logging.getLogger("engram.server")
PATH = "/mcp"
CHUNK = 64 * 1024
DISCONNECT_POLL = 0.25  # seconds between looks at a connection for its client going away
OPERATIONS = by_name()
Message = dict[str, Any]


class Service(Protocol):
    """An ASGI app with a lifetime (mcp_server.http.StreamableHTTP)."""

    async def handle(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        """Answer one request."""

    def running(self) -> AbstractAsyncContextManager[None]:
        """Held from the daemon's start to its stop."""


Factory = Callable[["DaemonCalls", str, int], Service]
SERVICE: web.AppKey[Service] = web.AppKey("mcp")
CALLS: web.AppKey[DaemonCalls] = web.AppKey("mcp_calls")


class DaemonCalls:
    """Facade calls for the MCP tools, run where the daemon's routes run them."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.port: int | None = None  # learnt from the first request

    async def call(self, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        """The facade method `name`: a write on the writer (one at a time, ahead of index
        jobs), a read that may run a model on the model threads, any other on the readers."""
        app = self.app
        fn = getattr(app[ENGRAM], name)
        op = OPERATIONS.get(name)
        try:
            if op is not None and op.effect == "write" and not op.locked:
                return await app[JOBS].write(fn, *args, **kwargs)
            run = in_model_reader if op is not None and op.model else in_reader
            return await run(app, fn, *args, **kwargs)
        except Exception as exc:  # a full disk or a read-only folder: a tool error in one line
            error = storage_error(exc, str(app[ENGRAM].settings.db_path))
            if error is None or error is exc:
                raise
            raise error from None

    async def status(self) -> dict[str, Any]:
        """This daemon's index status, saying it answered."""
        info = await in_reader(self.app, self.app[ENGRAM].status)
        data: dict[str, Any] = codec.encode(info)
        return {"servedBy": {"daemon": True, "pid": os.getpid(), "port": self.port}, **data}

    async def active_note(self) -> tuple[int, str | None, Mapping[str, Any] | None]:
        """This daemon, and the note the plugin reported open in the last few minutes."""
        app, collection = self.app, self.app[CONFIG].collection
        note = app[RUNTIME].active_note
        if note is None or _age_seconds(note.at) > ACTIVE_NOTE_STALE_SECONDS:
            return os.getpid(), collection, None
        title = await in_reader(app, app[ENGRAM].note_title, collection, note.path)
        return os.getpid(), collection, {**codec.encode(note), "title": title}

    def close(self) -> None:
        """Nothing to release: the daemon owns the facade."""


def mount(app: web.Application, factory: Factory) -> None:
    """Answer MCP at /mcp with the service `factory` makes over this daemon's calls."""
    config = app[CONFIG]
    # the SDK logs each stateless request's end at INFO; the access log already has one line
    for name in ("mcp.server.streamable_http", "mcp.server.streamable_http_manager"):
        logging.getLogger(name).setLevel(logging.WARNING)
    app[CALLS] = DaemonCalls(app)
    app[SERVICE] = factory(app[CALLS], config.collection, config.max_body)
    app.router.add_route("*", PATH, handle)
    app.cleanup_ctx.append(_running)


async def _running(app: web.Application) -> AsyncIterator[None]:
    """The service's lifetime, in a task of its own (the SDK's task group must be entered and
    left by one task; aiohttp may start and clean up the app from different ones)."""
    started, stop = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with app[SERVICE].running():
            started.set()
            await stop.wait()

    task = asyncio.create_task(hold(), name="engram-mcp")
    ready = asyncio.create_task(started.wait())
    await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        ready.cancel()
        task.result()  # it failed to start: say why
    yield
    stop.set()
    await task


async def handle(request: web.Request) -> web.StreamResponse:
    """One MCP request, answered by the service through the ASGI bridge."""
    transport = request.transport
    sock = transport.get_extra_info("sockname") if transport is not None else None
    if sock and request.app[CALLS].port is None:  # for status: the port clients came in on
        request.app[CALLS].port = int(sock[1])
    return await bridge(request, request.app[SERVICE].handle)


def _scope(request: web.Request) -> dict[str, Any]:
    """The ASGI scope of an aiohttp request."""
    transport = request.transport
    sock = transport.get_extra_info("sockname") if transport is not None else None
    peer = transport.get_extra_info("peername") if transport is not None else None
    host, port = tuple(sock[:2]) if sock else ("127.0.0.1", 0)
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [(k.lower(), v) for k, v in request.raw_headers],
        "client": tuple(peer[:2]) if peer else None,
        "server": (host, port),
    }


async def bridge(
    request: web.Request,
    app: Callable[
        [dict[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
        Awaitable[None],
    ],
) -> web.StreamResponse:
    """Run an ASGI app for an aiohttp request: the body streamed in, the answer streamed out,
    `http.disconnect` when the client goes away."""
    scope = _scope(request)
    response: web.StreamResponse | None = None
    body_left = True

    async def receive() -> Message:
        nonlocal body_left
        if body_left:
            chunk = await request.content.read(CHUNK)
            body_left = not request.content.at_eof()
            return {"type": "http.request", "body": chunk, "more_body": body_left}
        while request.transport is not None and not request.transport.is_closing():
            await asyncio.sleep(DISCONNECT_POLL)
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal response
        if request.transport is None or request.transport.is_closing():
            return  # the client hung up: its answer is dropped (ASGI 2.3), the work is done
        if message["type"] == "http.response.start":
            response = web.StreamResponse(status=message["status"])
            for name, value in message.get("headers", ()):
                response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await response.prepare(request)
        elif message["type"] == "http.response.body" and response is not None:
            await response.write(message.get("body", b""))
            if not message.get("more_body", False):
                await response.write_eof()

    await app(scope, receive, send)
    if response is None:
        if request.transport is None or request.transport.is_closing():
            log.info("%s %s: the client closed the connection", request.method, request.path)
            return web.Response(status=CLIENT_CLOSED)
        raise RuntimeError("the MCP transport answered nothing")
    return response
