"""init and fact add / show / list / update / archive / supersede / from-note / sweep."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from engram.cli.collections_cmds import language_hint
from engram.cli.main import State, cli, daemon_option, echo_json, pass_state, say, warn
from engram.codec import encode

F = TypeVar("F", bound=Callable[..., Any])
TYPES_HELP = (
    "decision, observation, plan, project, error, insight, correction, learning, lesson, "
    "steering_rule, preference, session_summary, commitment, relationship, fact, feeling"
)


def vault_option(func: F) -> F:
    """--vault PATH|NAME and --json."""
    func = click.option("--json", "as_json", is_flag=True, help="Output as JSON.")(func)
    return click.option(
        "--vault", metavar="PATH|NAME", help="Act on this vault (default: the one set by init)."
    )(func)


def fact_line(fact: Any) -> str:
    """One line per fact for people."""
    return _line(fact.id, fact.fact_type, fact.importance, fact.title, fact.lifecycle, fact.path)


def _line(fid: str, kind: str, importance: float, title: str, life: str, path: str) -> str:
    state = "" if life == "active" else f" ({life})"
    return f"{fid[:8]}  [{kind}|i={importance:.2f}]  {title}{state}  — {path}"


def show_fact(fact: Any, as_json: bool) -> None:
    """A fact in full (JSON, or properties then text)."""
    if as_json:
        echo_json(fact)
        return
    data = encode(fact)
    for key in (
        "id",
        "path",
        "factType",
        "importanceScore",
        "importanceTier",
        "confidence",
        "lifecycleState",
        "tags",
        "entities",
        "supersededBy",
        "supersedes",
        "contradictsWith",
        "timestamp",
        "updatedAt",
        "createdBy",
        "lastEditedBy",
    ):
        value = data[key]
        if value in (None, [], ""):
            continue
        say(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
    say("")
    say(fact.text)


def show_written(fact: Any, as_json: bool) -> None:
    """A fact a write returned, and on stderr what failed after it was stored (the fact is
    stored all the same: exit 0)."""
    show_fact(fact, True) if as_json else say(fact_line(fact))
    for warning in fact.warnings:
        warn(warning)


@cli.command("init")
@click.argument("vault", type=click.Path(file_okay=False))
@click.option("--name", "-n", help="Collection name (default: the folder's name).")
@click.option("--facts-root", help="Folder for fact notes inside the vault (default Engram).")
@click.option("--config-dir", help="Obsidian's config folder name (default .obsidian).")
@click.option("--no-index", is_flag=True, help="Register only; index later with update.")
@click.option(
    "--graph-colours", is_flag=True, help="Also add graph view colour groups (graph colours)."
)
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def init(
    state: State,
    vault: str,
    name: str | None,
    facts_root: str | None,
    config_dir: str | None,
    no_index: bool,
    graph_colours: bool,
    as_json: bool,
) -> None:
    """Register VAULT as the default vault: a collection, its facts folder, the template."""
    info = state.engram.init_vault(vault, name, facts_root, config_dir, index=not no_index)
    plan = state.engram.graph_colours(True, info.name) if graph_colours else None
    # a vault mostly in languages the English model does not read gets the multilingual one
    chosen = state.engram.fit_embed_model() if info.documents is not None else None
    if as_json:
        extra = {"graphColours": encode(plan)} if plan else {}
        echo_json(encode(info) | extra | {"embedModelChosen": chosen})
        return
    if plan is not None:
        from engram.cli.graph_files_cmds import show_plan

        show_plan(plan, True)
    say(f"vault {info.name}: {info.path} (default)")
    say(f"facts in {info.facts_root}/, Obsidian config in {info.config_dir}/")
    say(f"template {info.template}: {info.template_status}")
    if info.documents is not None:
        say(f"{info.documents} documents indexed")
        if chosen:
            say(chosen)
        else:
            language_hint(state)


@cli.group()
def fact() -> None:
    """Store, show, list, change and retire facts (agent memory as notes)."""


@fact.command("add")
@click.argument("text", nargs=-1, required=True)
@click.option(
    "--type", "fact_type", metavar="TYPE", help=f"Fact type (inferred if not given): {TYPES_HELP}."
)
@click.option("--title", help="Title (default: the first line of the text).")
@click.option("--importance", type=click.FloatRange(0, 1), help="0..1 (inferred if not given).")
@click.option("--confidence", type=click.FloatRange(0, 1), help="0..1 (default 1).")
@click.option("--tags", multiple=True, help="Tags (repeatable, or comma-separated).")
@click.option("--entities", multiple=True, help="People, projects, things (repeatable).")
@click.option("--scope", help="Scope (default: default).")
@click.option("--source", default="cli", show_default=True, help="Where the fact came from.")
@click.option(
    "--by",
    "created_by",
    envvar="ENGRAM_AGENT_ID",
    default="cli",
    help="Who stores it (default $ENGRAM_AGENT_ID, else cli).",
)
@click.option("--supersedes", metavar="ID", help="This fact replaces fact ID.")
@click.option("--contradicts", metavar="ID", multiple=True, help="This fact contradicts ID.")
@daemon_option
@vault_option
@pass_state
def fact_add(
    state: State, /, text: tuple[str, ...], vault: str | None, as_json: bool, **fields: Any
) -> None:
    """Store TEXT as a fact note."""
    result = state.engram.fact_add(" ".join(text), vault=vault, **fields)
    show_written(result, as_json)


@fact.command("show")
@click.argument("ref")
@daemon_option
@vault_option
@pass_state
def fact_show(state: State, ref: str, vault: str | None, as_json: bool) -> None:
    """Show a fact by id, id prefix, file name or vault path."""
    show_fact(state.engram.fact_get(ref, vault), as_json)


@fact.command("list")
@click.option("--type", "fact_type", metavar="TYPE", help="Only this type.")
@click.option("--tag", help="Only facts with this tag.")
@click.option("--scope", help="Only this scope.")
@click.option("--tier", "tier_name", type=click.Choice(["structural", "potential", "contextual"]))
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(["active", "dormant", "merged", "archived", "pruned"]),
    help="Lifecycle states to list (repeatable; default active and dormant).",
)
@click.option("-n", "limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--by-importance", is_flag=True, help="Most important first (default newest).")
@vault_option
@pass_state
def fact_list(
    state: State,
    /,
    states: tuple[str, ...],
    by_importance: bool,
    vault: str | None,
    as_json: bool,
    **filters: Any,
) -> None:
    """List facts, newest first."""
    facts = state.engram.fact_list(
        states=states or ("active", "dormant"),
        vault=vault,
        order="importance" if by_importance else "created",
        **filters,
    )
    if as_json:
        echo_json(facts)
        return
    if not facts:
        say("no facts yet: engram fact add TEXT")
    for f in facts:
        say(fact_line(f))


@fact.command("update")
@click.argument("ref")
@click.option("--text", help="New text.")
@click.option("--title", help="New title.")
@click.option("--type", "fact_type", metavar="TYPE", help="New type (moves the note).")
@click.option("--importance", type=click.FloatRange(0, 1))
@click.option("--confidence", type=click.FloatRange(0, 1))
@click.option("--tags", multiple=True, help="Replace the tags (repeatable).")
@click.option("--entities", multiple=True, help="Replace the entities (repeatable).")
@click.option("--scope")
@click.option(
    "--state", "lifecycle", type=click.Choice(["active", "dormant", "merged", "archived", "pruned"])
)
@daemon_option
@vault_option
@pass_state
def fact_update(
    state: State,
    /,
    ref: str,
    tags: tuple[str, ...],
    entities: tuple[str, ...],
    vault: str | None,
    as_json: bool,
    **fields: Any,
) -> None:
    """Change some fields of a fact (the rest of the note is left as it is)."""
    result = state.engram.fact_update(
        ref, tags=tags or None, entities=entities or None, vault=vault, **fields
    )
    show_written(result, as_json)


@fact.command("archive")
@click.argument("ref")
@click.option("--prune", is_flag=True, help="Also move the note into the archive folder.")
@daemon_option
@vault_option
@pass_state
def fact_archive(state: State, ref: str, prune: bool, vault: str | None, as_json: bool) -> None:
    """Archive a fact (recall skips it; the note stays, nothing is deleted)."""
    result = state.engram.fact_archive(ref, prune, vault)
    show_written(result, as_json)


@fact.command("supersede")
@click.argument("ref")
@click.argument("text", nargs=-1)
@click.option("--by", "by", metavar="ID", help="An existing fact replaces it (instead of TEXT).")
@click.option("--type", "fact_type", metavar="TYPE", help="The new fact's type (default: REF's).")
@click.option("--tags", multiple=True, help="The new fact's tags (default: REF's; repeatable).")
@click.option("--entities", multiple=True, help="Its entities (default: REF's; repeatable).")
@click.option("--scope", help="Its scope (default: REF's).")
@vault_option
@pass_state
def fact_supersede(
    state: State,
    ref: str,
    text: tuple[str, ...],
    by: str | None,
    fact_type: str | None,
    tags: tuple[str, ...],
    entities: tuple[str, ...],
    scope: str | None,
    vault: str | None,
    as_json: bool,
) -> None:
    """Replace fact REF by a new fact TEXT (or --by ID); both notes record it. The new fact
    keeps REF's type, tags, entities and scope unless given."""
    result = state.engram.fact_supersede(
        ref,
        " ".join(text) if text else None,
        by,
        vault,
        fact_type=fact_type,
        tags=tags,
        entities=entities,
        scope=scope,
    )
    if as_json:
        echo_json(result)
    else:
        say(f"superseded: {fact_line(result.old)}")
        say(f"by:         {fact_line(result.new)}")
    for warning in dict.fromkeys((*result.new.warnings, *result.old.warnings)):
        warn(warning)


@fact.command("from-note")
@click.argument("path")
@click.option("--selection", help="Store this passage as a new fact citing the note.")
@click.option("--type", "fact_type", metavar="TYPE", help="Fact type (inferred if not given).")
@vault_option
@pass_state
def fact_from_note(
    state: State,
    path: str,
    selection: str | None,
    fact_type: str | None,
    vault: str | None,
    as_json: bool,
) -> None:
    """Make the note at PATH a fact (its text untouched), or store --selection from it."""
    result = state.engram.fact_from_note(path, selection, vault, fact_type=fact_type)
    show_written(result, as_json)


@fact.command("sweep")
@click.option("--dry-run", is_flag=True, help="Only say what would change.")
@vault_option
@pass_state
def fact_sweep(state: State, dry_run: bool, vault: str | None, as_json: bool) -> None:
    """Move idle facts active → dormant → archived (and recalled ones back to active)."""
    changes = state.engram.fact_sweep(dry_run, vault)
    moves = state.engram.ledger_archive(dry_run, vault)  # old observation days, too
    if as_json:
        echo_json(changes)
        return
    for c in changes:
        say(f"{c.id[:8]}  {c.old} -> {c.new}  {c.path}")
    say(f"{len(changes)} facts {'would change' if dry_run else 'changed'}")
    if moves:
        from engram.cli.ledger_cmds import show_moves

        show_moves(moves, dry_run)
