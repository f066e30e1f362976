"""A misbehaving Convex deployment on 127.0.0.1: a real aiohttp server in a thread that
answers `facts:listChangedSince` with whatever a test's `answer` says (a value sent in Convex's
success envelope, or a sender that writes its own response), and logs what it was asked."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web

Sender = Callable[[web.Request], Awaitable[web.StreamResponse]]
# answer(args, n) -> the function's value (n counts the calls from 1), or a Sender
Answer = Callable[[dict[str, Any], int], Any]


class HostileConvex:
    """A loopback server; `calls` holds the args of every `facts:listChangedSince` asked;
    `mutate` answers mutations (default: the function is not deployed)."""

    def __init__(self, answer: Answer, mutate: Answer | None = None) -> None:
        self.answer = answer
        self.mutate = mutate
        self.calls: list[dict[str, Any]] = []
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        args = dict(body.get("args") or {})
        args.pop("token", None)
        if request.path == "/api/mutation" and self.mutate is not None:
            reply = self.mutate(args, 0)
        elif body.get("path") == "facts:listChangedSince":
            self.calls.append(args)
            reply = self.answer(args, len(self.calls))
        else:
            message = f"Could not find public function for '{body.get('path')}'"
            return web.json_response({"status": "error", "errorMessage": message})
        if callable(reply):
            return await reply(request)
        return web.json_response({"status": "success", "value": reply})

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/query", self._handle)
        app.router.add_post("/api/mutation", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    def start(self) -> HostileConvex:
        """Listen (returns once the port is open)."""
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def stop(self) -> None:
        """Close the server and its thread."""
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@contextmanager
def hostile(answer: Answer, mutate: Answer | None = None) -> Iterator[HostileConvex]:
    """A HostileConvex for the length of a `with` block."""
    server = HostileConvex(answer, mutate).start()
    try:
        yield server
    finally:
        server.stop()


def page(changes: list[Any], cursor: str, done: bool) -> dict[str, Any]:
    """A listChangedSince value."""
    return {"changes": changes, "nextCursor": cursor, "isDone": done}


def fact(fid: str, seq: int, text: str = "A fact from another machine.") -> dict[str, Any]:
    """A change as Convex returns it (format json: changeSeq as decimal digits)."""
    return {
        "externalId": fid,
        "title": text.rstrip("."),
        "text": text,
        "factType": "observation",
        "timestamp": "2025-01-02T03:04:05Z",
        "lifecycleState": "active",
        "tags": [],
        "entities": [],
        "contradictsWith": [],
        "version": 1.0,
        "changeSeq": str(1_700_000_000_000_000_000 + seq),
        "contentHash": "0" * 64,
    }


def stream(total: int, content_length: bool = False) -> Sender:
    """A sender of a success envelope `total` bytes long, made as it is sent (the server
    holds one chunk, never the reply); `content_length` announces its size up front."""

    async def send(request: web.Request) -> web.StreamResponse:
        head = b'{"status":"success","value":{"changes":[],"nextCursor":"'
        tail = b'","isDone":true}}'
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        if content_length:
            resp.content_length = total
        await resp.prepare(request)
        await resp.write(head)
        chunk = b"x" * (1 << 20)
        left = total - len(head) - len(tail)
        try:
            while left > 0:
                await resp.write(chunk[: min(left, len(chunk))])
                left -= len(chunk)
            await resp.write(tail)
        except (ConnectionError, RuntimeError):
            pass  # the client hung up, as it should
        return resp

    return send
