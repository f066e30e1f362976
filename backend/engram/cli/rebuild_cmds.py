"""rebuild."""

from __future__ import annotations

import sys
from typing import Any

import click

from engram.cli.main import State, cli, echo_json, pass_state, warn


@cli.command()
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Output the report as JSON.")
@pass_state
def rebuild(state: State, yes: bool, as_json: bool) -> None:
    """Make the whole index again from the files (also when its file is gone), keeping sync
    bookkeeping, access counts and vectors. The old index works until the new one is done."""
    from engram.server.discovery import IndexLock, describe, read, server_file

    settings = state.engram.settings
    if not settings.collections:
        raise click.UsageError("no collections yet: engram collection add PATH --name NAME")
    if not yes:
        if not sys.stdin.isatty():
            raise click.UsageError("not a terminal to confirm on: pass --yes to rebuild")
        names = ", ".join(c.name for c in settings.collections)
        click.confirm(
            f"Rebuild the index {settings.index_name!r} from {names}? "
            "It stays usable until the new one is complete",
            abort=True,
        )
    lock = IndexLock(settings.data_dir, settings.index_name)
    if not lock.acquire():  # the daemon holds it for as long as it runs
        running = read(server_file(settings.data_dir, settings.index_name))
        raise click.ClickException(
            "engram serve is running for this index"
            + (f" ({describe(running)})" if running else "")
            + ": stop it, run engram rebuild, then start it again"
        )
    try:
        report = _run(state, quiet=as_json)
    finally:
        lock.release()
    if as_json:
        echo_json(report)
        return
    for w in report.update.warnings if report.update else ():
        where = f"{w.collection}/{w.path}" if w.path else w.collection
        warn(f"{where}: {w.message}")
    click.echo(report.summary())


def _run(state: State, quiet: bool) -> Any:
    engram = state.engram
    if quiet or not sys.stderr.isatty():
        return engram.rebuild()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        return engram.rebuild(progress)
