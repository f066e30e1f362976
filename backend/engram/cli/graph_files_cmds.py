"""engram graph export / colours, and typed neighbours (docs/graph.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from engram.cli.graph_cmds import graph
from engram.cli.main import State, echo_json, pass_state, say

if TYPE_CHECKING:
    from engram.service.graph_files import ColourPlan


def show_typed(
    state: State,
    note: str,
    edge_types: tuple[str, ...],
    depth: int,
    direction: str,
    collection: str | None,
    as_json: bool,
) -> None:
    """`graph neighbors --edge-type`: nodes reached over typed edges."""
    found = state.engram.typed_neighbors(note, edge_types, depth, direction, collection)
    if as_json:
        echo_json(found.neighbors)
        return
    say(f"{found.path}: {len(found.neighbors)} over {', '.join(found.edge_types)}")
    for n in found.neighbors:
        say(f"  {n.hops} {n.via:<20} {n.path or n.id}")


@graph.command("export")
@click.option(
    "--format", "fmt", type=click.Choice(["json", "graphml"]), default="json", show_default=True
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), help="Write to FILE (default: stdout)."
)
@click.option("-c", "--collection", metavar="NAME", help="The vault; default: the only one.")
@pass_state
def export(state: State, fmt: str, output: str | None, collection: str | None) -> None:
    """The typed graph (notes, tags, unresolved targets; wiki_link, embed, tag and
    frontmatter_relation edges) as graph-index.json's JSON or as GraphML."""
    done = state.engram.graph_export(fmt, collection, output)
    if done.file is None:
        click.echo(done.text, nl=False)
        return
    say(f"wrote {done.file}", err=True)


@graph.command("colours")
@click.option("--write", is_flag=True, help="Apply (default: show what would be added).")
@click.option("--vault", metavar="PATH|NAME", help="The vault (default: the one set by init).")
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def graph_colours(state: State, write: bool, vault: str | None, as_json: bool) -> None:
    """Add a colour group per facts folder to Obsidian's graph view settings (graph.json);
    your own settings and groups stay as they are. Run it with Obsidian closed."""
    plan = state.engram.graph_colours(write, vault)
    if as_json:
        echo_json(plan)
        return
    show_plan(plan, write)


def show_plan(plan: ColourPlan, write: bool) -> None:
    """What `graph colours` added or would add."""
    if not plan.added:
        say(f"{plan.path}: all {plan.present} colour groups are already there")
        return
    verb = "added" if plan.written else "would add"
    say(f"{plan.path}: {verb} {len(plan.added)} colour groups")
    for g in plan.added:
        say(f"  {g.rgb}  {g.query}")
    if not write:
        say("run again with --write to apply (with Obsidian closed, or reload it after)")
