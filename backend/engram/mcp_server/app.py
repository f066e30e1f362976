"""The MCP server: the tool set, one dispatcher that checks arguments and turns every failure
into an MCP error, and the stdio entry the CLI calls (`serve`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from engram import __version__
from engram.errors import EngramError, NotFoundError
from engram.mcp_server import profiles
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.schema import Tool
from engram.mcp_server.stdio import Lines, claim_stdin, forward

log = logging.getLogger("engram.mcp")
AGENT = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def listed(tool: Tool[Any, Any]) -> types.Tool:
    """The MCP description of a tool."""
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=dict(tool.schema),
        annotations=types.ToolAnnotations(
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive and not tool.read_only,
            idempotent_hint=tool.read_only or tool.idempotent,
            open_world_hint=False,
        ),
    )


def failure(message: str) -> types.CallToolResult:
    """A tool error the agent sees (and can act on), not a protocol error."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def describe(exc: EngramError) -> str:
    """An Engram error as the agent reads it: kind, message, hint."""
    text = f"{exc.code}: {exc.message}"
    if exc.hint:
        text += f"\nhint: {exc.hint}"
    if isinstance(exc, NotFoundError) and exc.suggestions and not exc.hint:
        text += "\ndid you mean: " + ", ".join(exc.suggestions)
    return text


async def call(
    gateway: Gateway,
    name: str,
    arguments: dict[str, Any] | None,
    tools: Sequence[Tool[Any, Any]] | None = None,
) -> types.CallToolResult:
    """Run one of `tools` (default: the gateway's tool set); any failure becomes an isError
    result, never a crash."""
    offered = profiles.select(gateway.options.tools) if tools is None else tools
    tool = next((t for t in offered if t.name == name), None)
    if tool is None:
        names = ", ".join(t.name for t in offered)
        more = (
            f" ({name} is in the full set: engram mcp --tools all)"
            if any(t.name == name for t in profiles.TOOLS)
            else ""
        )
        raise MCPError(types.INVALID_PARAMS, f"unknown tool {name!r}; the tools are: {names}{more}")
    try:
        request, extra = tool.decode(arguments)
        text = await tool.run(gateway, request, extra)
    except EngramError as exc:
        return failure(describe(exc))
    except Exception as exc:  # a bug must not take the server down with it
        log.exception("tool %s failed", name)
        return failure(
            f"internal error in {name}: {type(exc).__name__}: {exc} "
            "(the server is still running; its log on stderr has the details)"
        )
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def create_server(gateway: Gateway) -> Server[Any]:
    """The MCP server over `gateway`, offering the tool set its options name. Over HTTP a
    client may choose its own in the address (`/mcp?tools=all&agent=NAME`): several agents
    share one daemon, each with its tool set and the name its facts are stored under."""
    listings: dict[str, tuple[tuple[Tool[Any, Any], ...], types.ListToolsResult]] = {}

    def offered(spec: str) -> tuple[tuple[Tool[Any, Any], ...], types.ListToolsResult]:
        if spec not in listings:
            try:
                tools = profiles.select(spec)
            except EngramError as exc:
                raise MCPError(types.INVALID_PARAMS, describe(exc)) from None
            listings[spec] = (tools, types.ListToolsResult(tools=[listed(t) for t in tools]))
        return listings[spec]

    def chosen(ctx: ServerRequestContext[Any]) -> tuple[str, Gateway]:
        asked = _query(ctx)
        agent = asked.get("agent")
        if agent is not None and not AGENT.fullmatch(agent):
            raise MCPError(
                types.INVALID_PARAMS, f"agent {agent!r}: use 1 to 64 of A-Z a-z 0-9 _ . -"
            )
        return asked.get("tools") or gateway.options.tools, (
            gateway.with_agent(agent) if agent else gateway
        )

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return offered(chosen(ctx)[0])[1]

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec, gw = chosen(ctx)
        return await call(gw, params.name, params.arguments, offered(spec)[0])

    return Server(
        "engram",
        version=__version__,
        title="Engram",
        instructions=profiles.instructions(gateway.options.tools),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _query(ctx: ServerRequestContext[Any]) -> Mapping[str, str]:
    """The query parameters of the HTTP request a call came in (none over stdio)."""
    params = getattr(getattr(ctx, "request", None), "query_params", None)
    return {str(k): str(v) for k, v in params.items()} if params is not None else {}


def serve(gateway: Gateway) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection."""
    server = create_server(gateway)

    async def main() -> None:
        lines = Lines(claim_stdin())
        async with (
            stdio_server(stdin=cast(Any, lines)) as (read, write),
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(forward, lines.rejected, write)
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        gateway.close()
