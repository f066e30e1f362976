"""Engram's MCP server over Streamable HTTP, as the ASGI app `engram serve` answers at /mcp.

The SDK's session manager runs stateless, answering in JSON: each POST is one JSON-RPC
exchange, served on its own and answered when the call is done. No session lives in the
daemon between requests (nothing to expire, nothing lost when it restarts), and no stream is
held open: Engram never sends a client anything it did not ask for. The daemon's own checks
(bearer token, Host, Origin, body size) come before this app sees a request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from engram.mcp_server.app import create_server
from engram.mcp_server.gateway import Calls, Gateway, Options

Scope = dict[str, Any]


class StreamableHTTP:
    """The ASGI app of one daemon: `handle` answers a request, `running` holds the SDK's
    task group for the daemon's lifetime."""

    def __init__(self, calls: Calls, vault: str, max_body: int) -> None:
        options = Options(vault=vault, agent="mcp", only_vault=True)
        self.gateway = Gateway(calls, options)
        self.manager = StreamableHTTPSessionManager(
            create_server(self.gateway),
            json_response=True,
            stateless=True,
            max_request_body_size=max_body,
        )

    async def handle(self, scope: Scope, receive: Any, send: Any) -> None:
        """Answer one HTTP request (ASGI)."""
        await self.manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The manager's task group, from the daemon's start to its stop."""
        try:
            async with self.manager.run():
                yield
        finally:
            self.gateway.close()


def streamable_http(calls: Calls, vault: str, max_body: int) -> StreamableHTTP:
    """The /mcp app over the daemon's calls, for its vault (the composition root hands this
    to `engram serve`)."""
    return StreamableHTTP(calls, vault, max_body)
