"""engram tags: every tag with its number of notes, as Obsidian's tag pane shows them."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

import click

from engram.cli.main import State, cli, daemon_option, echo_json, pass_state
from engram.printable import printable

if TYPE_CHECKING:
    from engram.service.tags import TagList

INDENT = "  "  # per level of nesting


@cli.command()
@click.option(
    "-c",
    "--collection",
    "collections",
    multiple=True,
    metavar="NAME",
    help="Only this collection (repeatable; default: all).",
)
@click.option(
    "--sort",
    type=click.Choice(["name", "count"]),
    default="name",
    show_default=True,
    help="Order of tags at each level: by name, or most notes first.",
)
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@daemon_option
@pass_state
def tags(state: State, collections: tuple[str, ...], sort: str, as_json: bool) -> None:
    """Every tag with its number of notes, nested tags under their parent.

    As in Obsidian, `#Tag` and `#tag` are one tag (shown as the vault spells it most), and a
    parent counts the notes of the tags nested under it: what `tag:NAME` would find.
    """
    found = state.engram.tags(collections, sort)
    if as_json:
        from engram.codec import encode

        echo_json(encode(found))
        return
    for line in pane(found):
        click.echo(line)


def pane(found: TagList) -> list[str]:
    """The tag pane as lines: each tag's last level, indented under its parent, and its
    count in a right-aligned column."""
    if not found.tags:
        return ["no tags"]
    labels = []
    for t in found.tags:
        depth = t.name.count("/")
        labels.append(INDENT * depth + printable(t.name.rsplit("/", 1)[-1]))
    width = max(_width(label) for label in labels)
    digits = len(str(max(t.count for t in found.tags)))
    return [
        f"{label}{' ' * (width - _width(label))}  {t.count:>{digits}}"
        for label, t in zip(labels, found.tags, strict=True)
    ]


def _width(text: str) -> int:
    """Columns `text` takes on a terminal: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
