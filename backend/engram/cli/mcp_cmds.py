"""mcp: the MCP stdio server for agents (composition root of engram.mcp_server)."""

from __future__ import annotations

import sys

import click

from engram.cli.main import State, cli, configure_logging, pass_state


@cli.command()
@click.option(
    "--vault",
    metavar="PATH|NAME",
    help="The vault memory tools act on (default: the one set by engram init).",
)
@click.option(
    "--index",
    "index_name",
    metavar="NAME",
    help="Use another index (same as engram --index NAME mcp).",
)
@click.option(
    "--agent",
    metavar="NAME",
    envvar="ENGRAM_AGENT_ID",
    default="mcp",
    show_default=True,
    help="createdBy of the facts this server stores (default $ENGRAM_AGENT_ID, else mcp).",
)
@click.option(
    "--tools",
    metavar="lean|all|NAME,...",
    envvar="ENGRAM_MCP_TOOLS",
    default="lean",
    show_default=True,
    help="The tools listed: lean (8 everyday tools), all, or tool names separated by commas "
    "(default $ENGRAM_MCP_TOOLS, else lean).",
)
@click.option(
    "--no-daemon",
    is_flag=True,
    help="Work in-process even when `engram serve` is running for this index.",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    help="What the server logs on stderr (stdout carries the protocol).",
)
@pass_state
def mcp(
    state: State,
    vault: str | None,
    index_name: str | None,
    agent: str,
    tools: str,
    no_daemon: bool,
    log_level: str,
) -> None:
    """Serve Engram's tools to an MCP host (Claude Desktop, Claude Code, Cursor...) over
    stdin/stdout: search, read, memory, notes and graph. Uses the running `engram serve` of
    the index when there is one (warm models), else works in-process. See docs/mcp.md.
    """
    from engram.cli.root import open_engram
    from engram.errors import InvalidInputError
    from engram.mcp_server.app import serve
    from engram.mcp_server.gateway import Gateway, Options, Worker
    from engram.mcp_server.profiles import select

    try:
        select(tools)
    except InvalidInputError as exc:
        raise click.BadParameter(f"{exc.message}; {exc.hint}", param_hint="--tools") from None

    configure_logging(log_level)
    if index_name:
        state.index = index_name
    settings = state.settings
    gateway = Gateway(
        Worker(lambda: open_engram(settings, use_daemon=not no_daemon)),
        options=Options(vault=vault, agent=agent, use_daemon=not no_daemon, tools=tools),
    )
    if sys.stdin.isatty():
        click.echo(
            "engram mcp speaks the Model Context Protocol on stdin/stdout: configure it in an MCP "
            "host (docs/mcp.md). Waiting for a client; Ctrl-C quits.",
            err=True,
        )
    serve(gateway)
