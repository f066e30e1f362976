"""serve, token show, token rotate."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from engram.cli.main import State, cli, configure_logging, echo_json, pass_state, say

vault_option = click.option(
    "--vault",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The vault (or any folder of notes) the daemon serves.",
)
config_dir_option = click.option(
    "--config-dir",
    default=".obsidian",
    show_default=True,
    help="The vault's config folder (Obsidian lets users rename it).",
)


@cli.command()
@vault_option
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port on 127.0.0.1 (default: a free one, written to discovery.json).",
)
@click.option("--no-watch", is_flag=True, help="Do not watch the vault for changes.")
@config_dir_option
@click.option(
    "--debounce",
    type=click.FloatRange(0.1, 60),
    default=2.0,
    show_default=True,
    help="Seconds a changed file must stay quiet before it is re-indexed.",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
    help="info logs one line per request (never headers or query strings).",
)
@pass_state
def serve(
    state: State,
    vault: Path,
    port: int,
    no_watch: bool,
    config_dir: str,
    debounce: float,
    log_level: str,
) -> None:
    """Run the localhost daemon for a vault: the HTTP API of the Obsidian plugin, a watcher
    that keeps the index fresh, one warm process the CLI uses for search and get, and MCP
    for agents at /mcp (Streamable HTTP, docs/mcp.md).

    Binds 127.0.0.1 only; every request but /v1/health needs the bearer token, which is in
    <vault>/<config-dir>/plugins/engram/discovery.json while the daemon runs. Stop it with
    Ctrl-C (or SIGTERM).
    """
    from engram.mcp_server.http import streamable_http
    from engram.secrets import system_keyring
    from engram.server.discovery import check_config_dir
    from engram.server.run import ServeOptions
    from engram.server.run import serve as run

    configure_logging(log_level)
    options = ServeOptions(
        vault=vault,
        port=port,
        watch=not no_watch,
        config_dir=check_config_dir(config_dir),
        debounce=debounce,
        mcp=streamable_http,
    )

    def announce(message: str) -> None:
        say(message)
        sys.stdout.flush()

    run(state.local_engram(), options, system_keyring(), announce)


@cli.group()
def token() -> None:
    """The bearer token of a vault's daemon (kept in the system keyring, else a 0600 file)."""


@token.command("show")
@vault_option
@click.option("--json", "as_json", is_flag=True, help="Output as JSON (token and where it lives).")
@pass_state
def token_show(state: State, vault: Path, as_json: bool) -> None:
    """Print the token (created on first use) for clients you configure by hand."""
    from engram.secrets import system_keyring
    from engram.server.tokens import TokenStore

    store = TokenStore(state.settings.data_dir, vault.resolve(), system_keyring())
    value = store.get_or_create()
    if as_json:
        echo_json({"vault": str(vault.resolve()), "store": store.kind, "token": value})
    else:
        click.echo(value)


@token.command("rotate")
@vault_option
@config_dir_option
@pass_state
def token_rotate(state: State, vault: Path, config_dir: str) -> None:
    """Replace the token; a running daemon switches to the new one at once (clients re-read
    discovery.json)."""
    from engram.cli.root import rotate_token

    say(rotate_token(state.settings, vault.resolve(), config_dir), err=True)
