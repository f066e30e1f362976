"""engram ledger append / observe: the raw transcript ledger (docs/memory.md)."""

from __future__ import annotations

import sys
from typing import Any

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
    from engram.service.ledger import decode_lines

    result = state.engram.ledger_append(agent, list(decode_lines(text)), vault)
    if as_json:
        echo_json(result)
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
    result = state.engram.ledger_observe(agent, day, vault)
    if as_json:
        echo_json(result)
        return
    say(
        f"{result.day}: {result.added} observations added to {result.path} "
        f"({result.scanned} raw lines, {result.skipped} already observed or empty)"
    )
    for bad in result.bad_lines:
        say(f"warning: unreadable raw line {bad}", err=True)


@ledger.command("archive")
@click.option("--dry-run", is_flag=True, help="Only say what would move.")
@vault_option
@pass_state
def ledger_archive(state: State, dry_run: bool, vault: str | None, as_json: bool) -> None:
    """Move observation days older than memory.observations_keep_days to the archive folder
    (engram fact sweep does this too)."""
    moves = state.engram.ledger_archive(dry_run, vault)
    if as_json:
        echo_json(moves)
        return
    show_moves(moves, dry_run)


def show_moves(moves: list[Any], dry_run: bool) -> None:
    """One line per archived ledger day, then a count."""
    for m in moves:
        say(f"{m.source} -> {m.target}")
    say(f"{len(moves)} ledger days {'would move' if dry_run else 'archived'}")


@cli.command("reflect")
@click.argument("week", required=False)
@vault_option
@pass_state
def reflect(state: State, week: str | None, vault: str | None, as_json: bool) -> None:
    """Regenerate WEEK's reflection, ledger/reflections/YYYY-Www.md (2026-W10, a date in
    the week, or "this week"; default: the last week that ended)."""
    result = state.engram.reflect(week, vault)
    if as_json:
        echo_json(result)
        return
    state_word = "written" if result.written else "unchanged"
    say(f"{result.path}: {result.facts} facts, {state_word}")
