"""sync, sync push / pull / status / init: facts with a Convex deployment (docs/convex.md)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from engram.cli.main import State, cli, daemon_option, echo_json, pass_state, say
from engram.cli.memory_cmds import vault_option
from engram.cli.root import running_daemon
from engram.codec import encode


def _options(func: Any) -> Any:
    return vault_option(daemon_option(func))


@cli.group(invoke_without_command=True)
@_options
@click.pass_context
def sync(ctx: click.Context, vault: str | None, as_json: bool) -> None:
    """Sync facts with Convex: push what changed here, pull what changed there.

    \b
    engram sync init --url https://NAME.convex.cloud   set it up (asks for the sync token)
    engram sync                                        push, then pull
    engram sync status                                 pending, conflicts, errors
    """
    if ctx.invoked_subcommand is None:
        _run(ctx.ensure_object(State), vault, as_json, push=True, pull=True)


@sync.command("push")
@_options
@pass_state
def push(state: State, vault: str | None, as_json: bool) -> None:
    """Send the facts that changed here to Convex."""
    _run(state, vault, as_json, push=True, pull=False)


@sync.command("pull")
@_options
@pass_state
def pull(state: State, vault: str | None, as_json: bool) -> None:
    """Bring Convex's changes into the vault's fact notes."""
    _run(state, vault, as_json, push=False, pull=True)


def _run(state: State, vault: str | None, as_json: bool, push: bool, pull: bool) -> None:
    """One run (through the daemon when it serves this vault: its writer does the work)."""
    result = state.engram.sync_now(vault, push=push, pull=pull)
    report, summary = encode(result), result.summary()
    if as_json:
        echo_json(report)
    else:
        say(summary)
        for note in report.get("notes") or ():
            say(f"note: {note}")
    if report.get("error"):
        if report.get("hint") and not as_json:
            say(f"hint: {report['hint']}", err=True)
        sys.exit(1)


@sync.command("status")
@vault_option
@pass_state
def status(state: State, vault: str | None, as_json: bool) -> None:
    """Pending changes, last sync, conflicts, refused (parked) facts and remote changes that
    could not be applied."""
    info = state.engram.sync_status(vault)
    if as_json:
        echo_json(info)
        return
    if not info.configured:
        say(str(info.reason))
        return
    say(f"vault {info.vault} ↔ {info.url} (device {info.device})")
    say(f"state: {info.state}, {info.pending} pending, last sync {info.last_sync}")
    if info.last_error:
        say(f"last error: {info.last_error}")
    elif info.stopped:
        say(f"last pull stopped early ({info.stopped}): the next run goes on from there")
    for op in info.parked:
        say(f"refused by Convex (fix the fact to resend): {op.fact_id}: {op.error}")
    for r in info.rejected:
        say(f"not applied from Convex (the pull went past it): {r.external_id}: {r.reason}")
    for c in info.conflicts:
        say(f"conflict copy: {c.copy} (of {c.path}; {', '.join(c.fields)})")


@sync.command("check")
@vault_option
@pass_state
def check(state: State, vault: str | None, as_json: bool) -> None:
    """Compare every fact note with Convex (changes nothing); exit 1 when not in step."""
    checked = state.engram.sync_check(vault)
    info = encode(checked)
    if as_json:
        echo_json(info)
    else:
        say(f"{'in step' if info['inStep'] else 'NOT in step'}: {info['same']} facts agree")
        labels = {
            "differ": "differs from Convex",
            "onlyHere": "only in this vault",
            "onlyInConvex": "only in Convex",
            "deletedInConvexLiveHere": "deleted in Convex, live here",
        }
        for key, label in labels.items():
            for fid in info[key]:
                say(f"  {fid}: {label}")
        if info["pending"]:
            say(f"  {info['pending']} changes wait in the outbox (run engram sync)")
    if not checked.in_step:
        sys.exit(1)


@sync.command("init")
@click.option("--url", required=True, help="The deployment URL (https://NAME.convex.cloud).")
@click.option(
    "--token-stdin", is_flag=True, help="Read the sync token from stdin instead of asking."
)
@click.option("--device", help="This machine's name in Convex (default: the host name).")
@click.option("--interval", type=click.IntRange(min=5), help="Seconds between daemon syncs.")
@click.option("--no-check", is_flag=True, help="Do not ask the deployment before saving.")
@vault_option
@pass_state
def init(
    state: State,
    url: str,
    token_stdin: bool,
    device: str | None,
    interval: int | None,
    no_check: bool,
    vault: str | None,
    as_json: bool,
) -> None:
    """Point a vault at a Convex deployment and keep its credentials in the keyring.

    The sync token is the deployment's ENGRAM_SYNC_TOKEN: taken from $ENGRAM_SYNC_TOKEN,
    stdin (--token-stdin) or a hidden prompt, never from the command line. A deploy key in
    $CONVEX_DEPLOY_KEY (or a user token in $CONVEX_AUTH_TOKEN) is sent as Authorization when
    the deployment requires one.
    """
    token = os.environ.get("ENGRAM_SYNC_TOKEN", "")
    if token_stdin:
        token = sys.stdin.readline().strip()
    elif not token:
        token = click.prompt("Sync token (ENGRAM_SYNC_TOKEN of the deployment)", hide_input=True)
    auth = None
    if os.environ.get("CONVEX_DEPLOY_KEY"):
        auth = f"Convex {os.environ['CONVEX_DEPLOY_KEY'].strip()}"
    elif os.environ.get("CONVEX_AUTH_TOKEN"):
        auth = f"Bearer {os.environ['CONVEX_AUTH_TOKEN'].strip()}"
    info = state.engram.sync_init(
        url, token, auth, device, interval, vault=vault, check=not no_check
    )
    if as_json:
        echo_json(info)
        return
    checked = "checked, " if info.checked else ""
    say(
        f"vault {info.vault} syncs with {info.url} ({checked}credentials in "
        f"the {info.credentials}); run engram sync to push its facts"
    )
    if info.functions:
        say(f"Convex functions to deploy: {info.functions} (npx convex deploy)")
    if running_daemon(state.settings) is not None:
        say("restart engram serve so the daemon syncs in the background", err=True)
