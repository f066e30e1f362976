"""engram hook: agent hooks that capture conversations without the agent asking (docs/hooks.md).

`engram hook claude-code` is run by Claude Code, not by people: it reads a hook payload on
stdin and must never stand in the agent's way, so it always exits 0, within
`$ENGRAM_HOOK_TIMEOUT` seconds, and says what went wrong in one line on stderr.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from engram.cli.main import State, cli, pass_state, say

if TYPE_CHECKING:
    from engram.service.hook_settings import SettingsChange

DEFAULT_TIMEOUT = 20.0  # seconds; the installed hooks give Claude Code's 30 as the outer bound
AGENTS = click.Choice(["claude-code"])


@cli.group()
def hook() -> None:
    """Agent hooks: capture conversations into the raw ledger without the agent asking."""


@hook.command("claude-code")
@click.option(
    "--agent",
    default="claude-code",
    show_default=True,
    help="Whose raw ledger the lines go to (ledger/raw/AGENT/...).",
)
@click.option("--vault", metavar="PATH|NAME", help="Capture into this vault (default: init's).")
@click.option("-v", "--verbose", is_flag=True, help="Say what was captured, on stderr.")
@pass_state
def claude_code(state: State, agent: str, vault: str | None, verbose: bool) -> None:
    """Run as a Claude Code hook: read the hook's JSON on stdin; at SessionStart print the
    wake context, at UserPromptSubmit / Stop / PreCompact / SessionEnd append the
    transcript's new turns to the raw ledger (and observe them). Always exits 0."""
    timer = _watchdog(_seconds(os.environ.get("ENGRAM_HOOK_TIMEOUT")))
    try:
        _hook(state, agent, vault, verbose)
    finally:
        timer.cancel()


def _hook(state: State, agent: str, vault: str | None, verbose: bool) -> None:
    try:
        from engram.service import hooks

        if sys.stdin is None or sys.stdin.isatty():
            raise click.UsageError("no hook payload on stdin (Claude Code runs this command)")
        payload = hooks.parse_payload(sys.stdin.buffer.read(hooks.MAX_PAYLOAD + 1))
        outcome = hooks.run(
            state.engram,
            payload,
            _transcript_places(os.environ),
            state.settings.data_dir / "hooks",
            agent,
            vault,
        )
    except Exception as exc:  # a hook never fails the agent: one line, exit 0
        _fail(exc)
        return
    if outcome.output:
        click.echo(outcome.output)
    if verbose:
        say(
            f"engram hook {outcome.event}: {outcome.appended} lines captured, "
            f"{outcome.duplicates} already there, {outcome.observed} observations, "
            f"{outcome.masked} secrets masked",
            err=True,
        )
    for note in outcome.notes:
        say(f"engram hook: {note}", err=True)


def _fail(exc: BaseException) -> None:
    """The one stderr line a failed hook leaves (Claude Code shows it; the agent goes on)."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    say(f"engram hook: {' '.join(str(message).split())[:500]}", err=True)


def _seconds(value: str | None) -> float:
    try:
        seconds = float(value) if value else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT
    return seconds if 0 < seconds <= 600 else DEFAULT_TIMEOUT


def _watchdog(seconds: float) -> threading.Timer:
    """Leave with exit 0 after `seconds`, whatever is still running (a stdin that never
    ends, a daemon that does not answer): an append is whole lines under a lock, and the
    next hook finds what this one did not send."""

    def expire() -> None:
        sys.stderr.write(f"engram hook: gave up after {seconds:g} s (ENGRAM_HOOK_TIMEOUT)\n")
        sys.stderr.flush()
        os._exit(0)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    return timer


def _transcript_places(env: os._Environ[str] | dict[str, str]) -> list[Path]:
    """Where transcripts may be read: Claude Code's projects folder and ENGRAM_HOOK_TRANSCRIPTS."""
    base = env.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    places = [Path(base).expanduser() / "projects"]
    extra = env.get("ENGRAM_HOOK_TRANSCRIPTS", "")
    places += [Path(p).expanduser() for p in extra.split(os.pathsep) if p.strip()]
    return [p for p in places if p.is_absolute()]


def _settings_file(project: str | None, local: bool) -> Path:
    if project is None:
        if local:
            raise click.UsageError("--local goes with --project DIR")
        base = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
        return Path(base).expanduser() / "settings.json"
    folder = Path(project).expanduser().resolve()
    if not folder.is_dir():
        raise click.UsageError(f"--project: {project} is not a folder")
    return folder / ".claude" / ("settings.local.json" if local else "settings.json")


def _engram_command(vault: str | None) -> str:
    """This engram, by absolute path, as the hook command (hooks do not see a venv's PATH)."""
    argv0 = Path(sys.argv[0])
    if argv0.name in ("engram", "engram.exe") and argv0.exists():
        run = [str(argv0.absolute())]
    elif found := shutil.which("engram"):
        run = [found]
    else:
        run = [sys.executable, "-m", "engram"]
    return shlex.join([*run, "hook", "claude-code", *(["--vault", vault] if vault else [])])


def _scope_options(func: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        [
            click.argument("agent", type=AGENTS),
            click.option("--user", is_flag=True, help="The user's settings (the default)."),
            click.option(
                "--project", metavar="DIR", help="DIR/.claude/settings.json, for the project."
            ),
            click.option(
                "--local",
                is_flag=True,
                help="With --project: .claude/settings.local.json (yours, not committed).",
            ),
            click.option("--dry-run", is_flag=True, help="Show the change; write nothing."),
        ]
    ):
        func = option(func)
    return func


@hook.command("install")
@_scope_options
@click.option("--command", "command", metavar="CMD", help="The command the hooks run.")
@click.option("--vault", metavar="PATH|NAME", help="The vault the hooks capture into.")
def install(
    agent: str,
    user: bool,
    project: str | None,
    local: bool,
    dry_run: bool,
    command: str | None,
    vault: str | None,
) -> None:
    """Add Engram's hooks to Claude Code's settings (other hooks and settings kept)."""
    from engram.service import hook_settings

    if user and project:
        raise click.UsageError("--user or --project, not both")
    path = _settings_file(project, local)
    change = hook_settings.edit(path, command or _engram_command(vault), dry_run)
    _report(change, "added to")


@hook.command("uninstall")
@_scope_options
def uninstall(agent: str, user: bool, project: str | None, local: bool, dry_run: bool) -> None:
    """Take Engram's hooks out of Claude Code's settings (nothing else is touched)."""
    from engram.service import hook_settings

    if user and project:
        raise click.UsageError("--user or --project, not both")
    _report(hook_settings.edit(_settings_file(project, local), None, dry_run), "removed from")


def _report(change: SettingsChange, verb: str) -> None:
    if change.diff:
        click.echo(change.diff, nl=False)
    if not change.changed:
        say(f"{change.path}: nothing to change")
    elif change.written:
        say(f"Engram's hooks {verb} {change.path}")
    else:
        say(f"dry run: {change.path} not written")
