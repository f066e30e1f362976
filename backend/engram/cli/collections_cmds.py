"""collection, context, ls, update, status, cleanup, doctor."""

from __future__ import annotations

import sys
from typing import Any

import click

from engram.cli.main import State, cli, echo_json, pass_state, say, warn
from engram.codec import encode


@cli.group()
def collection() -> None:
    """Add, list, show, rename and remove collections (folders to index)."""


@collection.command("add")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--name", "-n", help="Collection name (default: the folder's name).")
@click.option("--mask", help='Files to index, a glob (default "**/*.{md,pdf,canvas}").')
@click.option("--ignore", multiple=True, help="Glob of files or folders to skip (repeatable).")
@click.option("--no-index", is_flag=True, help="Only register it; index later with update.")
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def collection_add(
    state: State,
    path: str,
    name: str | None,
    mask: str | None,
    ignore: tuple[str, ...],
    no_index: bool,
    as_json: bool,
) -> None:
    """Register PATH as a collection and index it."""
    added = state.engram.collection_add(path, name, mask, ignore)
    info = encode(added)
    if not no_index:
        report = _run_update(state, [added.name], quiet=as_json)
        info = encode(state.engram.collection_show(added.name)) | {"update": encode(report)}
    if as_json:
        echo_json(info)
    else:
        say(
            f"added collection {info['name']}: {info['path']} ({info['pattern']}), "
            f"{info['documents']} documents"
        )
        if not no_index:
            language_hint(state)


def language_hint(state: State) -> None:
    """After indexing: say when the embedder does not serve the notes' languages (stderr)."""
    advice = state.engram.language_report().advice
    if advice:
        warn(advice)


@collection.command("list")
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def collection_list(state: State, as_json: bool) -> None:
    """List collections with their document counts."""
    cols = state.engram.collection_list()
    if as_json:
        echo_json(cols)
        return
    if not cols:
        say("no collections yet: engram collection add PATH --name NAME")
    for c in cols:
        say(f"{c.name}\t{c.documents} docs\t{c.path}\t{c.pattern}")


@collection.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def collection_show(state: State, name: str, as_json: bool) -> None:
    """Show a collection's settings and contexts."""
    info = encode(state.engram.collection_show(name))
    if as_json:
        echo_json(info)
        return
    for key in ("name", "path", "pattern", "documents", "lastIndexed"):
        say(f"{key}: {info[key]}")
    if info["ignore"]:
        say("ignore: " + ", ".join(info["ignore"]))
    for ctx in info["contexts"]:
        say(f"context {ctx['prefix']}: {ctx['text']}")


@collection.command("remove")
@click.argument("name")
@pass_state
def collection_remove(state: State, name: str) -> None:
    """Forget a collection and drop its documents from the index (files are untouched)."""
    removed = state.engram.collection_remove(name)
    say(f"removed collection {name} ({removed} documents dropped from the index)")


@collection.command("rename")
@click.argument("old")
@click.argument("new")
@pass_state
def collection_rename(state: State, old: str, new: str) -> None:
    """Rename a collection."""
    state.engram.collection_rename(old, new)
    say(f"renamed collection {old} -> {new}")


@cli.command("ls")
@click.argument("target", required=False)
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def ls(state: State, target: str | None, as_json: bool) -> None:
    """List collections, or the indexed files under COLLECTION[/PATH]."""
    listing = state.engram.ls(target)
    if as_json:  # one list, of collections or of files
        echo_json([*listing.collections, *listing.files])
        return
    for c in listing.collections:
        say(f"{c.name}/\t{c.documents} docs\t{c.path}")
    for f in listing.files:
        say(f"#{f.docid}  {f.collection}/{f.path}\t{f.title}")


@cli.group()
def context() -> None:
    """Describe folders so results carry that context (for people and agents)."""


@context.command("add")
@click.argument("args", nargs=-1, required=True)
@pass_state
def context_add(state: State, args: tuple[str, ...]) -> None:
    """Add context: [TARGET] TEXT, where TARGET is a path, engram://collection/path or /."""
    if len(args) > 2:
        raise click.UsageError('quote the text: engram context add PATH "some text"')
    target, text = (".", args[0]) if len(args) == 1 else args
    entry = state.engram.context_add(target, text)
    say(f"context set on {entry.target}")


@context.command("list")
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def context_list(state: State, as_json: bool) -> None:
    """List every context."""
    entries = state.engram.context_list()
    if as_json:
        echo_json(entries)
        return
    for e in entries:
        say(f"{e.target}\t{e.text}")


@context.command("rm")
@click.argument("target")
@pass_state
def context_rm(state: State, target: str) -> None:
    """Remove the context on TARGET."""
    state.engram.context_rm(target)
    say(f"context removed from {target}")


@cli.command()
@click.option(
    "-c", "--collection", "collections", multiple=True, help="Only this collection (repeatable)."
)
@click.option("--embed", "and_embed", is_flag=True, help="Then embed what changed (engram embed).")
@click.option(
    "--force", is_flag=True, help="Re-read every note and resolve every link again (a repair)."
)
@click.option("--json", "as_json", is_flag=True, help="Output the report as JSON.")
@pass_state
def update(
    state: State, collections: tuple[str, ...], and_embed: bool, force: bool, as_json: bool
) -> None:
    """Index new and changed notes, drop deleted ones (incremental)."""
    from engram.cli.semantic_cmds import run_embed

    report = _run_update(state, list(collections), quiet=as_json, force=force)
    out = encode(report)
    if not as_json:
        say(report.summary())
    if and_embed:
        embedded = run_embed(state, collections, False, quiet=as_json)
        out["embed"] = encode(embedded)
        if not as_json:
            say(embedded.summary())
    if as_json:
        echo_json(out)


def _run_update(state: State, collections: list[str], quiet: bool, force: bool = False) -> Any:
    engram = state.engram
    if not collections and not engram.settings.collections:
        raise click.UsageError("no collections yet: engram collection add PATH --name NAME")
    if quiet or not sys.stderr.isatty():
        report = engram.update(collections, force=force)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            transient=True,
        ) as bar:
            task = bar.add_task("indexing", total=None)
            report = engram.update(
                collections,
                lambda done, total: bar.update(task, completed=done, total=total),
                force=force,
            )
    if not quiet:
        for w in report.warnings:
            where = f"{w.collection}/{w.path}" if w.path else w.collection
            warn(f"{where}: {w.message}")
    return report


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def status(state: State, as_json: bool) -> None:
    """Collections, document counts, index size and freshness."""
    info = state.engram.status()
    if as_json:
        echo_json(info)
        return
    idx = info.index
    say(f"index: {idx.path} ({idx.bytes / 1e6:.1f} MB), last update: {idx.last_update or 'never'}")
    say(f"config: {info.config}")
    say(f"documents: {info.documents}, links: {info.links}, tags: {info.tags}")
    for c in info.collections:
        say(f"  {c.name}: {c.documents} docs in {c.path} ({c.pattern})")
    for overlap in info.overlaps:
        warn(overlap)
    files = info.files
    if files.pdfs or files.canvases:
        say(
            f"  PDFs: {files.pdfs} ({files.pdf_passages} passages), "
            f"canvases: {files.canvases} ({files.canvas_passages} passages)"
        )
    for path in files.no_text:
        warn(f"{path}: no text (scanned?)")
    if info.warnings:
        say(f"{info.warnings} notes were indexed with warnings (see: engram doctor)")
    vector = info.vector_search
    vec = "available" if vector.available else f"unavailable: {vector.error}"
    say(f"vector search: {vec}")
    emb = info.embeddings
    model = f"{emb.model}, dim {emb.dim}" if emb.model else "no model yet"
    say(
        f"embeddings: {emb.embedded}/{emb.chunks} passages embedded ({model}); "
        f"{emb.queued} queued, {emb.documents_chunked}/{info.documents} documents chunked"
    )
    waiting = emb.documents_not_embedded
    if waiting:
        click.echo(f"  {waiting} note{'s' * (waiting != 1)} not embedded yet: run engram embed")
    for role, m in info.models.items():
        what = m.state if m.spec else "not configured"
        say(f"{role + ' model:':15} {m.id or '-'} ({what})")
    stages = ", ".join(f"{name} {how}" for name, how in info.query_stages.items())
    say(f"query stages: {stages}")
    if info.languages.advice:
        say(f"languages: {info.languages.advice}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def cleanup(state: State, as_json: bool) -> None:
    """Drop documents of removed collections and orphaned data, then compact the index."""
    info = state.engram.cleanup()
    if as_json:
        echo_json(info)
        return
    say(
        f"removed {info.documents_removed} stale documents and "
        f"{info.contents_removed} orphaned texts; "
        f"{info.bytes_before / 1e6:.1f} MB -> {info.bytes_after / 1e6:.1f} MB"
    )


@cli.command()
@click.option(
    "--full", is_flag=True, help="Resolve every stored link again (default: a sample of notes)."
)
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def doctor(state: State, full: bool, as_json: bool) -> None:
    """Check SQLite, extensions, models, config and index health, with fixes."""
    checks = state.engram.doctor(full=full)
    if as_json:
        echo_json(checks)
    else:
        marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
        for c in checks:
            say(f"[{marks[c.status]}] {c.name}: {c.detail}")
            if c.fix and c.status != "ok":
                say(f"       fix: {c.fix}")
    if any(c.status == "fail" for c in checks):
        raise click.exceptions.Exit(1)
