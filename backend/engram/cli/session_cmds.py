"""recall, daily, memory context, checkpoint, wake, end-session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from engram.cli.main import State, cli, daemon_option, echo_json, pass_state, say
from engram.cli.memory_cmds import fact_line, vault_option
from engram.codec import encode

if TYPE_CHECKING:
    from engram.service import RecallHit


@cli.command()
@click.argument("query", nargs=-1)
@click.option("--type", "fact_type", metavar="TYPE", help="Only this fact type.")
@click.option("--tag", "tags", multiple=True, help="Only facts with this tag (repeatable).")
@click.option("--scope", help="Only this scope.")
@click.option("--since", metavar="DATE", help="From this date or phrase (2026-01-01, last week).")
@click.option("--until", metavar="DATE", help="Up to this date or phrase (yesterday, 2025).")
@click.option("--tier", "tier_name", type=click.Choice(["structural", "potential", "contextual"]))
@click.option("--notes", "include_notes", is_flag=True, help="Include ordinary notes too.")
@click.option("--all-states", is_flag=True, help="Include merged, archived and pruned facts.")
@click.option(
    "--deep",
    is_flag=True,
    help="Deep search: facts and notes, fused with the facts in Convex when sync is "
    "configured; each hit says where it came from (local, convex, both).",
)
@click.option(
    "--literal",
    is_flag=True,
    help="Search QUERY as written: read no time words or question from it.",
)
@click.option("-n", "n", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--by",
    "agent",
    envvar="ENGRAM_AGENT_ID",
    help="Count this recall for an agent (default $ENGRAM_AGENT_ID; unset: not counted).",
)
@vault_option
@daemon_option
@pass_state
def recall(
    state: State,
    /,
    query: tuple[str, ...],
    all_states: bool,
    deep: bool,
    vault: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Recall facts: relevance × importance × recency. Time words in QUERY ("last week",
    "since Monday", "in May 2024", "3 days ago") keep to those days, and a question ("what
    did we decide") to that type of fact; the first line says which."""
    text = " ".join(query)
    if deep:
        deep_search(state, text, options, all_states, vault, as_json)
        return
    states = ("active", "dormant", "merged", "archived", "pruned") if all_states else None
    found = state.engram.recall(text, vault=vault, states=states, **options)
    if as_json:
        echo_json(encode(found))
        return
    window = found.window
    read = [f"time: {', '.join((*window.phrases, window.label))}"] if window else []
    read += [f"type: {found.fact_type}"] if found.fact_type else []
    if read:
        words = f", words: {found.searched}" if found.searched else ", no words"
        say(f"({'; '.join(read)}{words})")
    if not found.results:
        say("nothing recalled")
    for h in found.results:
        say(f"{h.score:.3f}  {hit_line(h)}")


def deep_search(
    state: State,
    text: str,
    options: dict[str, Any],
    all_states: bool,
    vault: str | None,
    as_json: bool,
) -> None:
    """`recall --deep`: the hits with their source, then the search's notes."""
    filters = ("fact_type", "tags", "scope", "since", "until", "tier_name")
    if all_states or any(options[name] for name in filters):
        raise click.UsageError("--deep takes no filters: it searches every live fact and note")
    if not text.strip():
        raise click.UsageError("--deep needs a query")
    found = state.engram.deep_search(text, options["n"], vault)
    if as_json:
        echo_json(encode(found))
        return
    if not found.hits:
        say("nothing found")
    for h in found.hits:
        say(f"{h.score:.4f}  {h.source:6}  {hit_line(h.hit)}")
    for note in found.notes:
        say(f"note: {note}")


def hit_line(hit: RecallHit) -> str:
    """A recall hit for people: the fact's line, or the note's title and path."""
    if hit.fact is None:
        return f"note      {hit.title}  — {hit.path}"
    return fact_line(hit.fact)


@cli.command()
@click.argument("day", required=False)
@vault_option
@pass_state
def daily(state: State, day: str | None, vault: str | None, as_json: bool) -> None:
    """Regenerate the daily note of DAY (default today; a date or "yesterday")."""
    result = state.engram.daily(day, vault)
    if as_json:
        echo_json(result)
        return
    status = "written" if result.written else "unchanged"
    say(f"{result.path}: {result.facts} facts ({status})")


@cli.group()
def memory() -> None:
    """Memory as context for agents."""


@memory.command("context")
@click.argument("query", nargs=-1)
@click.option(
    "--profile",
    type=click.Choice(["default", "planning", "incident", "handoff"]),
    default="default",
    show_default=True,
    help="Which sources come first.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=0),
    default=4000,
    show_default=True,
    help="Token budget (characters / 4); never exceeded.",
)
@daemon_option
@vault_option
@pass_state
def memory_context(
    state: State,
    query: tuple[str, ...],
    profile: str,
    budget: int,
    vault: str | None,
    as_json: bool,
) -> None:
    """Build context: facts by tier, daily notes, search hits, graph neighbours."""
    result = state.engram.memory_context(" ".join(query) or None, profile, budget, vault)
    if as_json:
        echo_json(result)
        return
    say(result.text)
    say(f"\n[{len(result.items)} items, {result.used_tokens}/{budget} tokens]", err=True)


@cli.command()
@click.option("--working-on", required=True, help="What you are doing now.")
@click.option("--focus", help="What matters most right now.")
@click.option("--blocked", help="What is in the way.")
@click.option("--urgent", is_flag=True, help="Mark the work urgent.")
@vault_option
@pass_state
def checkpoint(
    state: State,
    working_on: str,
    focus: str | None,
    blocked: str | None,
    urgent: bool,
    vault: str | None,
    as_json: bool,
) -> None:
    """Save where the session is; raises the dirty-exit flag until end-session."""
    cp = state.engram.checkpoint(working_on, focus, blocked, urgent, vault)
    if as_json:
        echo_json(cp)
    else:
        say(f"checkpoint saved at {encode(cp)['timestamp']}: {cp.working_on}")


@cli.command()
@vault_option
@pass_state
def wake(state: State, vault: str | None, as_json: bool) -> None:
    """Start a session: last checkpoint, dirty exit, recent memory (decayed by age)."""
    result = state.engram.wake(vault)
    if as_json:
        echo_json(result)
        return
    if result.dirty:
        say("the last session ended without end-session (dirty exit)")
    if result.checkpoint:
        cp = encode(result.checkpoint)
        say(f"last checkpoint {cp['timestamp']}: working on {cp['workingOn']}")
        for key in ("focus", "blocked"):
            if cp[key]:
                say(f"  {key}: {cp[key]}")
    for r in result.recent:
        say(f"- [{r.fact_type}|i={r.importance:.2f}] {r.text} ({r.day.isoformat()})")
    for title, facts in (
        ("handoffs", result.handoffs),
        ("open commitments", result.commitments),
        ("active projects", result.projects),
    ):
        if facts:
            say(f"{title}:")
            for f in facts:
                say(f"  {fact_line(f)}")


@cli.command("end-session")
@click.option("--summary", help="Store this as a handoff fact for the next session.")
@click.option(
    "--by",
    "created_by",
    envvar="ENGRAM_AGENT_ID",
    default="cli",
    help="Who ends the session (default $ENGRAM_AGENT_ID, else cli).",
)
@vault_option
@pass_state
def end_session(
    state: State, summary: str | None, created_by: str, vault: str | None, as_json: bool
) -> None:
    """End the session cleanly: clears the dirty-exit flag."""
    result = state.engram.end_session(summary, created_by, vault)
    if as_json:
        echo_json(result)
        return
    say("session ended" + (" (it was dirty)" if result.was_dirty else ""))
    if result.handoff:
        say(f"handoff: {fact_line(result.handoff)}")
