"""models, embed, vsearch."""

from __future__ import annotations

import sys
from typing import Any

import click

from engram.cli.main import State, cli, color_enabled, daemon_option, echo_json, pass_state, say
from engram.cli.search_cmds import result_limit, search_options, with_filters
from engram.codec import encode


@cli.group()
def models() -> None:
    """List, download and inspect the GGUF models (embed, rerank, generate)."""


@models.command("list")
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def models_list(state: State, as_json: bool) -> None:
    """Each role's configured model, whether it is available, and the cached files."""
    info = state.engram.models_list()
    if as_json:
        echo_json(info)
        return
    for role, r in info.roles.items():
        if r.spec is None:
            say(f"{role:9} (not configured)")
        elif r.path is not None:
            say(f"{role:9} {r.spec} -> {r.path}")
        else:
            say(f"{role:9} {r.spec}  MISSING: {r.error or ''}")
    say("built-in embedders (engram models pull NAME):")
    for m in info.built_in:
        ready = "prepared" if m.prepared else f"not prepared, {m.download_mb} MB"
        say(f"  {m.spec:13} {m.name}: {m.languages} ({ready})")
    say(f"cache: {info.cache_dir}")
    for f in info.cached:
        say(f"  {f.path} ({f.bytes / 1e6:.1f} MB)")


@models.command("pull")
@click.argument("spec", required=False)
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def models_pull(state: State, spec: str | None, as_json: bool) -> None:
    """Download a model: SPEC is `default` (English), `multilingual`, hf:org/repo/file.gguf or a
    path (default: the configured embedding model)."""
    info = state.engram.models_pull(spec, None if as_json else lambda m: say(m, err=True))
    if as_json:
        echo_json(info)
    else:
        say(
            f"ready: {info.path} ({info.model_id}, {info.architecture}, "
            f"{info.file_type}, {info.size_bytes / 1e6:.1f} MB)"
        )


@models.command("info")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def models_info(state: State, spec: str, as_json: bool) -> None:
    """What a GGUF says about itself; SPEC is a role (embed, rerank, generate), a spec or a path."""
    info = state.engram.models_info(spec)
    data = encode(info)
    if as_json:
        echo_json(data)
        return
    for key in (
        "path",
        "modelId",
        "architecture",
        "name",
        "file_type",
        "size_bytes",
        "embedding_length",
        "context_length",
        "max_seq_length",
        "pooling",
        "tokenizer",
        "vocab_size",
        "has_chat_template",
    ):
        say(f"{key}: {data[key]}")


@models.command("path")
@click.argument("role", default="embed")
@pass_state
def models_path(state: State, role: str) -> None:
    """Print the local file of a role's model (embed, rerank or generate)."""
    say(str(state.engram.model_path(role)))


@cli.command()
@click.option("-f", "--force", is_flag=True, help="Re-embed everything from scratch.")
@click.option(
    "-c",
    "--collection",
    "collections",
    multiple=True,
    help="Only chunk this collection (repeatable).",
)
@click.option(
    "--model",
    "model",
    metavar="SPEC",
    help="Switch the embedding model first (default, multilingual, a .gguf path or hf:...): "
    "prepares it, sets models.embed in the config file, and embeds again with it.",
)
@click.option("--json", "as_json", is_flag=True, help="Output the report as JSON.")
@pass_state
def embed(
    state: State, force: bool, collections: tuple[str, ...], model: str | None, as_json: bool
) -> None:
    """Chunk notes and embed the passages that have no vector yet (resumable)."""
    from engram.cli.collections_cmds import language_hint

    if model is not None:
        info = state.engram.use_embed_model(model, None if as_json else lambda m: say(m, err=True))
        if not as_json:
            say(f"embedding model: {model} ({info.model_id}), set as models.embed", err=True)
    report = run_embed(state, collections, force, quiet=as_json)
    if as_json:
        echo_json(report)
    else:
        say(report.summary())
        language_hint(state)


def run_embed(state: State, collections: tuple[str, ...], force: bool, quiet: bool) -> Any:
    """Run `embed` with a progress bar (chunking, then embedding with ETA) on a terminal."""
    engram = state.engram
    if quiet or not sys.stderr.isatty():
        return engram.embed(collections, force, say=lambda message: click.echo(message, err=True))
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

        return engram.embed(collections, force, progress, say=bar.console.print)


@cli.command()
@click.argument("query", nargs=-1, required=True)
@search_options
@click.option("--chunks", is_flag=True, help="Show the best few passages of each document.")
@daemon_option
@pass_state
def vsearch(
    state: State,
    query: tuple[str, ...],
    limit: int | None,
    collections: tuple[str, ...],
    all_results: bool,
    min_score: float,
    full: bool,
    line_numbers: bool,
    fmt: str,
    chunks: bool,
    filters: str,
) -> None:
    """Semantic search: notes whose passages mean the same as the query (needs `engram embed`).
    Filters (path: tag: after: ... or the filter flags) work as in search."""
    from engram.cli.formats import render_results

    results = state.engram.vsearch(
        with_filters(query, filters),
        n=result_limit(limit, all_results, fmt),
        collections=collections,
        min_score=min_score,
        full=full,
        chunks=chunks,
    )
    if not results and fmt == "human":
        say("no results", err=True)
        return
    click.echo(render_results(results, fmt, color=color_enabled(), line_numbers=line_numbers))


@cli.command()
@click.argument("query", nargs=-1, required=True)
@search_options
@click.option("--chunks", is_flag=True, help="Show the best few passages of each document.")
@click.option("--no-expand", is_flag=True, help="Skip query expansion by the generator model.")
@click.option("--no-rerank", is_flag=True, help="Skip the reranker (fused order is final).")
@click.option(
    "-C",
    "--candidate-limit",
    type=click.IntRange(min=1),
    default=30,
    show_default=True,
    help="How many fused candidates the reranker rescores.",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Show which stages ran and each result's ranks and scores (with --json: an object "
    "with results, stages, expansions and notices).",
)
@daemon_option
@pass_state
def query(
    state: State,
    query: tuple[str, ...],
    limit: int | None,
    collections: tuple[str, ...],
    all_results: bool,
    min_score: float,
    full: bool,
    line_numbers: bool,
    fmt: str,
    chunks: bool,
    no_expand: bool,
    no_rerank: bool,
    candidate_limit: int,
    explain: bool,
    filters: str,
) -> None:
    """Hybrid search, the best ranking: keyword + semantic lists (plus expansions from the
    generator model) fused by reciprocal rank, then reranked by the reranker model.
    Works with whatever models are available; filters work as in search."""
    from engram.cli.formats import render_explain, render_results
    from engram.cli.main import warn

    run = state.engram.query_run(
        with_filters(query, filters),
        n=result_limit(limit, all_results, fmt),
        collections=collections,
        min_score=min_score,
        full=full,
        chunks=chunks,
        expand=not no_expand,
        rerank=not no_rerank,
        candidate_limit=candidate_limit,
        explain=explain,
    )
    results, notices, stages, expansions = run.results, run.notices, run.stages, run.expansions
    for notice in notices:
        warn(notice)
    if explain and fmt == "json":
        # the stage summary belongs in the document a program reads, as in the HTTP API
        echo_json(
            {
                "results": results,
                "stages": stages,
                "expansions": list(expansions),
                "notices": list(notices),
            }
        )
        return
    if explain:
        click.echo(render_explain(stages, tuple(expansions)), err=True)
    if not results and fmt == "human":
        say("no results", err=True)
        return
    click.echo(render_results(results, fmt, color=color_enabled(), line_numbers=line_numbers))
