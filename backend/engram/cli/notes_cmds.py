"""note create / edit / move / delete / link: safe vault writes with diffs and dry runs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from engram.cli.main import State, cli, color_enabled, echo_json, pass_state, say
from engram.printable import printable

F = TypeVar("F", bound=Callable[..., Any])
STDIN_HELP = "Text, or - to read it from standard input."

if TYPE_CHECKING:
    from engram.service import NoteChange


def write_options(precondition: bool = True) -> Callable[[F], F]:
    """--dry-run, --expected-hash (unless creating), --json and -c/--collection."""
    return lambda func: _write_options(func, precondition)


def _write_options(func: F, precondition: bool) -> F:
    func = click.option("--json", "as_json", is_flag=True, help="Output as JSON.")(func)
    func = click.option(
        "--dry-run", is_flag=True, help="Show the diff of every file it would touch; write nothing."
    )(func)
    if precondition:
        func = click.option(
            "--expected-hash",
            metavar="HASH",
            help="Only write if the note still has this sha256 (or docid); else fail.",
        )(func)
    return click.option(
        "-c",
        "--collection",
        metavar="NAME",
        help="The vault (collection) to write in; default: the default vault or the only one.",
    )(func)


def text_arg(value: str | None, state: State) -> str | None:
    """The option's text, or standard input for `-` (at most a note's size limit)."""
    if value != "-":
        return value
    limit = state.settings.max_file_bytes
    text = sys.stdin.read(limit + 1)
    if len(text) > limit:
        raise click.ClickException(
            f"standard input is over {limit:,} characters: more than a note may hold "
            "(max_file_bytes)"
        )
    return text


def parse_props(pairs: tuple[str, ...]) -> dict[str, Any]:
    """KEY=VALUE pairs; each value is read as YAML (`4`, `true`, `[a, b]`, `2024-05-01`)."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r}: use KEY=VALUE", param_hint="--set")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        out[key.strip()] = value
    return out


def show(change: NoteChange, as_json: bool) -> None:
    """A change as JSON, or its diff (dry run) and a one-line summary."""
    if as_json:
        echo_json(change)
        return
    if change.dry_run:
        color = color_enabled()
        for line in change.diff.splitlines():
            fg = None
            if color and line.startswith(("+++", "---")):
                fg = "bright_white"
            elif color and line[:1] in "+-@":
                fg = {"+": "green", "-": "red", "@": "cyan"}[line[:1]]
            click.secho(printable(line), fg=fg)
    prefix = "dry run, nothing written: " if change.dry_run else ""
    say(prefix + summary(change))


def summary(change: NoteChange) -> str:
    """One line saying what happened."""
    if not change.changed:
        return change.message or f"{change.path}: nothing to change"
    what = {
        "create": f"created {change.path}",
        "edit": f"edited {change.path}",
        "link": f"linked from {change.path}",
        "move": change.message,
        "delete": change.message,
    }[change.operation]
    if change.replacements is not None:
        what += f" ({change.replacements} replacements)"
    return what + (f"  [{change.hash[:12]}]" if change.hash else "")


@cli.group()
def note() -> None:
    """Create, edit, move, delete and link notes, safely (see docs/notes.md)."""


@note.command("create")
@click.argument("path", required=False)
@click.option("--title", help="With no PATH: the note's file name (cleaned for Obsidian).")
@click.option("--folder", help="With --title: the folder to create it in.")
@click.option("--body", default="", help=STDIN_HELP)
@click.option("--set", "props", multiple=True, metavar="KEY=VALUE", help="A property (repeat).")
@write_options(precondition=False)
@pass_state
def create(
    state: State,
    path: str | None,
    title: str | None,
    folder: str | None,
    body: str,
    props: tuple[str, ...],
    collection: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Create a note at PATH (or from --title); an existing file is never overwritten."""
    change = state.engram.note_create(
        path, title=title, folder=folder, body=text_arg(body, state) or "",
        frontmatter=parse_props(props) or None, dry_run=dry_run, collection=collection,
    )  # fmt: skip
    show(change, as_json)


@note.command("edit")
@click.argument("note_ref", metavar="NOTE")
@click.option("--append", help=f"Add at the end (of --heading's section). {STDIN_HELP}")
@click.option("--prepend", help=f"Add at the top (of --heading's section). {STDIN_HELP}")
@click.option("--heading", help="A heading: `Name`, `## Name` or `Parent#Name`.")
@click.option("--section", help=f"Replace the lines under --heading. {STDIN_HELP}")
@click.option("--find", help="Text to replace (a pattern with --regex).")
@click.option("--replace", "replacement", help="What to put instead (\\1 for groups with --regex).")
@click.option("--regex", is_flag=True, help="--find is a regular expression (multiline).")
@click.option("--count", type=click.IntRange(0), default=0, help="At most N replacements.")
@click.option("--set", "props", multiple=True, metavar="KEY=VALUE", help="Set a property.")
@click.option("--unset", multiple=True, metavar="KEY", help="Remove a property (repeat).")
@write_options()
@pass_state
def edit(
    state: State,
    note_ref: str,
    append: str | None,
    prepend: str | None,
    heading: str | None,
    section: str | None,
    find: str | None,
    replacement: str | None,
    regex: bool,
    count: int,
    props: tuple[str, ...],
    unset: tuple[str, ...],
    collection: str | None,
    expected_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Edit NOTE (a path, name, title or alias): properties, find/replace, a section,
    prepend, append, applied in that order."""
    change = state.engram.note_edit(
        note_ref, append=text_arg(append, state), prepend=text_arg(prepend, state), heading=heading,
        section=text_arg(section, state), find=find, replace=replacement, regex=regex, count=count,
        properties=parse_props(props) or None, remove_properties=unset,
        expected_hash=expected_hash, dry_run=dry_run, collection=collection,
    )  # fmt: skip
    show(change, as_json)


@note.command("move")
@click.argument("note_ref", metavar="NOTE")
@click.argument("new_path")
@write_options()
@pass_state
def move(
    state: State,
    note_ref: str,
    new_path: str,
    collection: str | None,
    expected_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Move or rename NOTE to NEW_PATH (vault-relative; ending in / keeps the name) and
    rewrite every link to it."""
    change = state.engram.note_move(
        note_ref, new_path, expected_hash=expected_hash, dry_run=dry_run, collection=collection
    )
    show(change, as_json)


@note.command("delete")
@click.argument("note_ref", metavar="NOTE")
@write_options()
@pass_state
def delete(
    state: State,
    note_ref: str,
    collection: str | None,
    expected_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Move NOTE to the vault's .trash folder (restore it by moving it back)."""
    change = state.engram.note_delete(
        note_ref, expected_hash=expected_hash, dry_run=dry_run, collection=collection
    )
    show(change, as_json)
    if change.broken_links and not as_json:
        say("still linking to it: " + ", ".join(change.broken_links), err=True)


@note.command("link")
@click.argument("note_ref", metavar="NOTE")
@click.argument("target")
@click.option("--section", default="Related", show_default=True, help="Heading to add it under.")
@click.option("--display", help="Link text: [[TARGET|DISPLAY]].")
@write_options()
@pass_state
def link(
    state: State,
    note_ref: str,
    target: str,
    section: str,
    display: str | None,
    collection: str | None,
    expected_hash: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Add a link to TARGET at the end of a section of NOTE (created when missing)."""
    change = state.engram.note_link(
        note_ref, target, section=section, display=display, expected_hash=expected_hash,
        dry_run=dry_run, collection=collection,
    )  # fmt: skip
    show(change, as_json)
