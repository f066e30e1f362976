"""engram ledger append / observe: the raw transcript ledger (docs/memory.md)."""

from __future__ import annotations

import sys

import click

from engram.cli.main import State, cli, echo_json, pass_state, say
from engram.cli.memory_cmds import vault_option

MAX_STDIN = 64 * 1024 * 1024  # one append reads at most this much


@cli.group()
def ledger() -> None:
    """The raw transcript ledger: append an agent's lines, score them into observations."""


@ledger.command("append")
@click.option(
    "--agent",
    envvar="ENGRAM_AGENT_ID",
    required=True,
    help="Whose transcript (a name: letters, digits, _ . -; default $ENGRAM_AGENT_ID).",
)
@vault_option
@pass_state
def ledger_append(state: State, agent: str, vault: str | None, as_json: bool) -> None:
    """Append JSON lines read from stdin ({"role", "text"[, "ts", ...]} each) to
    ledger/raw/AGENT/YYYY/MM/DD.jsonl; a bad line is refused with its number, nothing kept."""
    data = sys.stdin.buffer.read(MAX_STDIN + 1)
    if len(data) > MAX_STDIN:
        raise click.UsageError(f"stdin is over {MAX_STDIN:,} bytes; append in smaller parts")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(f"stdin is not UTF-8 (byte {exc.start})") from None
    result = state.engram.ledger.append_text(agent, text, vault)
    if as_json:
        echo_json(result.to_dict())
        return
    files = sorted({x.path for x in result.lines})
    say(f"{len(result.lines)} lines appended to {', '.join(files)}")


@ledger.command("observe")
@click.option("--agent", help="Only this agent's raw lines (default: every agent's).")
@click.option("--day", help="The UTC day (2026-03-05, yesterday...; default today).")
@vault_option
@pass_state
def ledger_observe(
    state: State, agent: str | None, day: str | None, vault: str | None, as_json: bool
) -> None:
    """Score a day's raw lines into observation lines (ledger/observations/...), once each."""
    result = state.engram.ledger.observe(agent, day, vault)
    if as_json:
        echo_json(result.to_dict())
        return
    say(
        f"{result.day}: {result.added} observations added to {result.path} "
        f"({result.scanned} raw lines, {result.skipped} already observed or empty)"
    )
    for bad in result.bad_lines:
        say(f"warning: unreadable raw line {bad}", err=True)
