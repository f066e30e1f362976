"""The `engram` command group, global options, output helpers and error handling."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.service import Engram

F = TypeVar("F", bound=Callable[..., Any])


class State:
    """Per-invocation state: global flags, the settings (read once) and the facade."""

    def __init__(self, index: str | None, config_file: str | None) -> None:
        self.index = index
        self.config_file = config_file
        self.use_daemon = True  # `--no-daemon` turns it off
        self._settings: Settings | None = None
        self._engram: Engram | None = None

    @property
    def settings(self) -> Settings:
        """The configuration of this invocation, resolved on first use."""
        if self._settings is None:
            from engram import config

            self._settings = config.resolve(
                os.environ, index=self.index, config_file=self.config_file
            )
        return self._settings

    @property
    def engram(self) -> Engram:
        """The facade, built on first use (keeps `--help` free of heavy imports): through
        the daemon of this index when one runs, else in this process (cli/root.py)."""
        if self._engram is None:
            from engram.cli.root import open_engram

            self._engram = open_engram(self.settings, self.use_daemon)
        return self._engram

    def local_engram(self) -> Engram:
        """An in-process facade of its own (`engram serve` is the daemon)."""
        from engram.cli.root import local_engram

        self._engram = local_engram(self.settings)
        return self._engram

    def close(self) -> None:
        """Close the facade if it was built."""
        if self._engram is not None:
            self._engram.close()


pass_state = click.make_pass_decorator(State)
_LAST: list[State] = []  # this invocation's State


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--index", metavar="NAME", help="Use another index (default: index, or $ENGRAM_INDEX)."
)
@click.option(
    "--config",
    "config_file",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Config file (default: $XDG_CONFIG_HOME/engram/<index>.yml).",
)
@click.version_option(package_name="engram", prog_name="engram")
@click.pass_context
def cli(ctx: click.Context, index: str | None, config_file: str | None) -> None:
    """Engram: local-first search and memory for Obsidian vaults and markdown folders.

    \b
    Quick start:
      engram collection add ~/vault --name notes
      engram search "what did we decide about pricing"
      engram get notes/projects/pricing.md
    """
    state = State(index, config_file)
    ctx.obj = state
    _LAST[:] = [state]  # for main's error handler, which runs after click let go of it
    ctx.call_on_close(state.close)


def daemon_option(func: F) -> F:
    """Add `--no-daemon` (work in-process even when `engram serve` is running)."""

    def off(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            ctx.find_object(State).use_daemon = False  # type: ignore[union-attr]

    return click.option(
        "--no-daemon",
        is_flag=True,
        expose_value=False,
        callback=off,
        help="Work in-process even when `engram serve` is running for this index.",
    )(func)


def output_options(func: F) -> F:
    """Add --json/--csv/--md/--xml/--files (human text by default)."""
    for name, hint in reversed(
        (
            ("json", "JSON array"),
            ("csv", "CSV with a header"),
            ("md", "Markdown"),
            ("xml", "XML"),
            ("files", "docid,score,path,context lines"),
        )
    ):
        func = click.option(f"--{name}", "fmt", flag_value=name, help=f"Output as {hint}.")(func)
    return click.option("--human", "fmt", flag_value="human", default=True, hidden=True)(func)


def color_enabled() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def echo_json(value: Any) -> None:
    """Print a value as a JSON document (engram.codec's shape)."""
    from engram.codec import encode
    from engram.printable import json_safe

    click.echo(json_safe(json.dumps(encode(value), ensure_ascii=False, indent=2)))


def echo_lines(lines: list[str]) -> None:
    """Print lines in one write (echoing 10,000 lines one by one, each call flushing, took
    40 to 90 ms). Escaping is the caller's."""
    if lines:
        click.echo("\n".join(lines))


def say(text: str, err: bool = False) -> None:
    """Print text that may hold names and text from the vault: control characters are escaped
    (lines and tabs kept), so a file name cannot drive the terminal. Colour goes on after."""
    from engram.printable import printable

    click.echo(printable(text, multiline=True), err=err)


def configure_logging(level: str) -> None:
    """Log to stderr at `level`, one escaped line per record (long-running commands)."""
    import logging

    from engram.printable import PrintableFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(PrintableFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, level.upper()), handlers=[handler])


def warn(message: str) -> None:
    """A warning line on stderr."""
    say(f"warning: {message}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: run the CLI and turn domain errors into exit codes."""
    from engram.cli import commands  # noqa: F401  (registers the commands)

    try:
        # outside standalone mode, click returns the code of a command's Exit (doctor's 1)
        code = cli.main(args=argv, prog_name="engram", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return 130
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except Exception as exc:
        from engram.errors import EngramError, storage_error

        # a full disk, a read-only folder, a full index: one line, not a traceback
        error = exc if isinstance(exc, EngramError) else storage_error(exc, _index_file())
        if error is None:
            raise
        say(f"error: {error.message}", err=True)
        if error.hint:
            say(f"hint: {error.hint}", err=True)
        return 1
    return code if isinstance(code, int) else 0


def _index_file() -> str | None:
    """The index file of the command that just failed, when it got that far."""
    state = _LAST[0] if _LAST else None
    if state is None or state._settings is None:
        return None
    return str(state._settings.db_path)
