"""engram graph: backlinks, links, unresolved, orphans, neighbors, path, rank, themes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from engram.cli.main import State, cli, color_enabled, echo_json, echo_lines, pass_state, say
from engram.printable import printable

F = TypeVar("F", bound=Callable[..., Any])


def graph_options(func: F) -> F:
    """-c/--collection and --json, shared by every graph command."""
    func = click.option("--json", "as_json", is_flag=True, help="Output as JSON.")(func)
    return click.option(
        "-c",
        "--collection",
        metavar="NAME",
        help="The vault (collection) to ask; default: the only one.",
    )(func)


def _dim(text: str) -> str:
    """`text` escaped (names come from the vault), then dimmed on a colour terminal."""
    return _styler(dim=True)(text)


def _bold(text: str) -> str:
    """`text` escaped, then bold on a colour terminal."""
    return _styler(bold=True)(text)


def _styler(**style: bool) -> Callable[[str], str]:
    """A function escaping text, then styling it on a colour terminal (asked once: a listing
    of 10,000 links styles 10,000 contexts)."""
    if not color_enabled():
        return printable
    return lambda text: click.style(printable(text), **style)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@cli.group()
def graph() -> None:
    """The vault's link graph: backlinks, neighbours, paths, influential notes, themes.

    NOTE is a path (`Projects/Plan.md`, `.md` optional), a file name, a title or an alias;
    close misses get "did you mean" suggestions.
    """


@graph.command()
@click.argument("note")
@graph_options
@pass_state
def backlinks(state: State, note: str, collection: str | None, as_json: bool) -> None:
    """Notes linking to NOTE, each link with its line."""
    found = state.engram.backlinks(note, collection)
    if as_json:
        echo_json(found.links)
        return
    dim = _styler(dim=True)
    lines = [_bold(f"{found.note.path}: {_count(len(found.links), 'backlink')}")]
    lines += [
        f"  {printable(f'{link.path}:{link.line}')}  {dim(link.context)}" for link in found.links
    ]
    echo_lines(lines)


@graph.command()
@click.argument("note")
@graph_options
@pass_state
def links(state: State, note: str, collection: str | None, as_json: bool) -> None:
    """Links written in NOTE and where each one goes."""
    found = state.engram.links(note, collection)
    if as_json:
        echo_json(found.links)
        return
    lines = [_bold(f"{found.note.path}: {_count(len(found.links), 'link')}")]
    for link in found.links:
        where = link.path or "(unresolved)"
        sub = f"#{link.heading}" if link.heading else f"#^{link.block}" if link.block else ""
        broken = " (missing heading)" if link.heading_found is False else ""
        broken += " (missing block)" if link.block_found is False else ""
        line = f"  {link.line}: [[{link.target}{sub}]] -> {where}{broken}"
        lines.append(printable(line, multiline=True))  # as say() escapes it
    echo_lines(lines)


@graph.command()
@click.option("--subpaths", is_flag=True, help="Also links to a missing #heading or #^block.")
@graph_options
@pass_state
def unresolved(state: State, subpaths: bool, collection: str | None, as_json: bool) -> None:
    """Links to notes or files that do not exist."""
    found = state.engram.unresolved(collection, subpaths)
    if as_json:
        echo_json(found)
        return
    dim = _styler(dim=True)
    lines = [_bold(_count(len(found), "unresolved link"))]
    for u in found:
        extra = f" (missing {u.reason})" if u.reason != "file" else ""
        hint = dim(f"  alias of {u.alias_of}") if u.alias_of else ""
        lines.append(f"  {printable(f'{u.source}:{u.line}  [[{u.target}]]{extra}')}{hint}")
    echo_lines(lines)


@graph.command()
@graph_options
@pass_state
def orphans(state: State, collection: str | None, as_json: bool) -> None:
    """Notes with no link to or from another note."""
    found = state.engram.orphans(collection)
    if as_json:
        echo_json(found)
        return
    click.echo(_bold(_count(len(found), "orphan")))
    for n in found:
        say(f"  {n.path}")


@graph.command()
@click.argument("note")
@click.option("--depth", "-d", type=click.IntRange(min=1), default=1, help="Hops (default 1).")
@click.option(
    "--direction",
    type=click.Choice(["both", "out", "in"]),
    default="both",
    help="Follow links (out), backlinks (in) or both (default).",
)
@click.option(
    "--edge-type",
    "edge_types",
    multiple=True,
    type=click.Choice(["wiki_link", "embed", "tag", "frontmatter_relation"]),
    help="Follow only these typed edges of the graph index (repeatable); tags and "
    "unresolved targets are nodes too.",
)
@graph_options
@pass_state
def neighbors(
    state: State,
    note: str,
    depth: int,
    direction: str,
    edge_types: tuple[str, ...],
    collection: str | None,
    as_json: bool,
) -> None:
    """Notes up to --depth links away from NOTE."""
    if edge_types:
        from engram.cli.graph_files_cmds import show_typed

        show_typed(state, note, edge_types, depth, direction, collection, as_json)
        return
    found = state.engram.neighbors(note, depth, collection, direction)
    if as_json:
        echo_json(found.neighbors)
        return
    click.echo(_bold(f"{found.note.path}: {_count(len(found.neighbors), 'neighbour')}"))
    arrows = {"out": "->", "in": "<-", "both": "<->", "mixed": "~"}
    for n in found.neighbors:
        say(f"  {n.distance} {arrows[n.direction]:>3} {n.path}")


@graph.command()
@click.argument("source")
@click.argument("target")
@click.option("--directed", is_flag=True, help="Follow links forward only.")
@graph_options
@pass_state
def path(
    state: State, source: str, target: str, directed: bool, collection: str | None, as_json: bool
) -> None:
    """The shortest chain of links from SOURCE to TARGET."""
    found = state.engram.path(source, target, collection, directed)
    if as_json:
        echo_json(found)
        return
    if not found.found:
        say(f"no path from {found.source} to {found.target}")
        return
    arrows = {"out": "->", "in": "<-", "both": "<->"}
    parts = [found.steps[0].path]
    parts += [f"{arrows[s.direction or 'out']} {s.path}" for s in found.steps[1:]]
    say("\n  ".join(parts))


@graph.command()
@click.option("--about", metavar="QUERY", help="Rank the notes central to this topic.")
@click.option(
    "--by",
    type=click.Choice(["influence", "bridging"]),
    default="influence",
    help="PageRank (influence, default) or betweenness (bridging).",
)
@click.option("-n", "limit", type=click.IntRange(min=1), default=20, help="How many (20).")
@graph_options
@pass_state
def rank(
    state: State, about: str | None, by: str, limit: int, collection: str | None, as_json: bool
) -> None:
    """The most influential or bridging notes, optionally about a topic."""
    found = state.engram.rank(about, by, limit, collection)
    if as_json:
        echo_json(found)
        return
    click.echo(_dim(found.method))
    for n in found.notes:
        mark = "*" if n.hit else " "
        why = f"<- {n.backlinks}"
        if n.topic_backlinks is not None:
            match = f"relevance {n.relevance:.2f}" if n.relevance is not None else "a link away"
            why = f"{match}, linked from {n.topic_backlinks} of {found.topic_size}, {why} in all"
        line = printable(f"{n.rank:>3}. {n.score:.3f} {mark} {n.path}")
        click.echo(f"{line}  {_dim(why)}")


@graph.command()
@click.option("--min-size", type=click.IntRange(min=1), default=2, help="Smallest theme (2).")
@graph_options
@pass_state
def themes(state: State, min_size: int, collection: str | None, as_json: bool) -> None:
    """Clusters of densely linked notes, with their top notes and tags."""
    found = state.engram.themes(collection, min_size)
    if as_json:
        echo_json(found)
        return
    for t in found:
        tags = " ".join(f"#{tag.tag}" for tag in t.tags)
        click.echo(_bold(f"{t.id}. {t.label}") + f"  ({_count(t.size, 'note')}) {_dim(tags)}")
        _list(n.path for n in t.notes)


def _list(items: Iterable[str]) -> None:
    for item in items:
        say(f"     {item}")
