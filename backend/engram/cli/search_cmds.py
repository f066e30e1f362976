"""search, get, multi-get, bench."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from engram.cli.main import (
    State,
    cli,
    color_enabled,
    daemon_option,
    echo_json,
    output_options,
    pass_state,
    say,
    warn,
)

F = TypeVar("F", bound=Callable[..., Any])


_FILTER_FLAGS = [
    click.option(
        "--path",
        "paths",
        multiple=True,
        metavar="PREFIX",
        help="Only notes under this path prefix (repeatable: any of them), like path:.",
    ),
    click.option(
        "--tag",
        "tags",
        multiple=True,
        metavar="TAG",
        help="Only notes with this tag or a subtag (repeatable: all of them), like tag:.",
    ),
    click.option(
        "--type",
        "doc_type",
        metavar="TYPE",
        help="Only notes whose frontmatter type is TYPE, like type:decision.",
    ),
    click.option(
        "--where",
        multiple=True,
        metavar="KEY:VALUE",
        help="Only notes whose frontmatter or inline field KEY is VALUE (repeatable).",
    ),
    click.option(
        "--after", metavar="DATE", help="Notes dated on or after DATE (YYYY[-MM[-DD]], today)."
    ),
    click.option("--before", metavar="DATE", help="Notes dated before DATE."),
    click.option(
        "--memory",
        is_flag=True,
        help="Also Engram's memory (facts, ledger, daily notes), like kind:all; "
        "by default only your notes.",
    ),
]


def filter_options(func: F) -> F:
    """--path, --tag, --type, --where, --after, --before, --memory: handed to the command as
    one `filters` argument in the inline query syntax, which the parser reads into the same
    filters as `path:` `tag:` `type:` `key:value` `after:` `before:` `kind:` in the query."""

    @functools.wraps(func)
    def command(
        *args: Any,
        paths: tuple[str, ...],
        tags: tuple[str, ...],
        doc_type: str | None,
        where: tuple[str, ...],
        after: str | None,
        before: str | None,
        memory: bool,
        **kwargs: Any,
    ) -> Any:
        from engram.service import filter_syntax

        fields = ((f"type:{doc_type}",) if doc_type else ()) + where
        kwargs["filters"] = filter_syntax(paths, tags, fields, after, before, memory)
        return func(*args, **kwargs)

    for opt in reversed(_FILTER_FLAGS):
        command = opt(command)
    return cast(F, command)


def with_filters(query: tuple[str, ...], filters: str) -> str:
    """The query words followed by the flag filters."""
    return " ".join((*query, filters)) if filters else " ".join(query)


def search_options(func: F) -> F:
    """The flags every search mode shares."""
    opts = [
        click.option(
            "-n",
            "limit",
            type=click.IntRange(min=1),
            default=None,
            help="Number of results (default 10; 20 for machine formats).",
        ),
        click.option(
            "-c",
            "--collection",
            "collections",
            multiple=True,
            help="Only this collection (repeatable).",
        ),
        click.option("--all", "all_results", is_flag=True, help="Return every match."),
        click.option(
            "--min-score",
            type=click.FloatRange(0, 1),
            default=0.0,
            help="Drop results scoring below this (0..1).",
        ),
        click.option("--full", is_flag=True, help="Print whole documents, not snippets."),
        click.option("--line-numbers", is_flag=True, help="Number the lines of --full output."),
    ]
    func = filter_options(func)
    for opt in reversed(opts):
        func = opt(func)
    return output_options(func)


def result_limit(limit: int | None, all_results: bool, fmt: str) -> int | None:
    """-n, or --all (no limit), or the default for the output format."""
    if all_results:
        return None
    return limit or (10 if fmt in ("human", "md") else 20)


@cli.command()
@click.argument("query", nargs=-1, required=True)
@search_options
@daemon_option
@pass_state
def search(
    state: State,
    query: tuple[str, ...],
    limit: int | None,
    collections: tuple[str, ...],
    all_results: bool,
    min_score: float,
    full: bool,
    line_numbers: bool,
    fmt: str,
    filters: str,
) -> None:
    """Keyword search (BM25). Words rank by relevance; "phrases" are required;
    -word excludes; word* is a prefix; filters: path: tag: collection: kind: after: before:
    key:value in the query (-path: and the like leave out), or the filter flags. Your notes
    only, unless --memory or kind:memory asks for Engram's facts, ledger and daily notes.
    """
    from engram.cli.formats import render_results

    results = state.engram.search(
        with_filters(query, filters),
        n=result_limit(limit, all_results, fmt),
        collections=collections,
        min_score=min_score,
        full=full,
    )
    if results and results[0].spelling:
        warn(f"showing results for {results[0].spelling!r} (a word of the query is in no note)")
    if results and results[0].notice:
        warn(results[0].notice)
    if not results and fmt == "human":
        say("no results", err=True)
        return
    click.echo(render_results(results, fmt, color=color_enabled(), line_numbers=line_numbers))


@cli.command()
@click.argument("ref")
@click.option("-l", "max_lines", type=click.IntRange(min=0), help="Print at most N lines.")
@click.option("--from", "from_line", type=click.IntRange(min=1), help="Start at line N.")
@click.option("--line-numbers", is_flag=True, help="Number the lines.")
@output_options
@daemon_option
@pass_state
def get(
    state: State,
    ref: str,
    max_lines: int | None,
    from_line: int | None,
    line_numbers: bool,
    fmt: str,
) -> None:
    """Print a document: PATH, collection/PATH, engram://collection/PATH or #docid, with an
    optional :LINE suffix."""
    from engram.cli.formats import render_documents

    doc = state.engram.get(ref, from_line=from_line, max_lines=max_lines)
    click.echo(render_documents([doc], fmt, line_numbers=line_numbers))


@cli.command("multi-get")
@click.argument("spec")
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=10_240,
    show_default=True,
    help="Skip files larger than this (noted in the output).",
)
@click.option("-l", "max_lines", type=click.IntRange(min=0), help="At most N lines per file.")
@click.option("--line-numbers", is_flag=True, help="Number the lines.")
@output_options
@pass_state
def multi_get(
    state: State, spec: str, max_bytes: int, max_lines: int | None, line_numbers: bool, fmt: str
) -> None:
    """Print several documents: a glob ("notes/projects/*.md"), a comma-separated list, or
    #docids."""
    from engram.cli.formats import render_documents

    docs = state.engram.multi_get(spec, max_bytes=max_bytes, max_lines=max_lines)
    click.echo(render_documents(docs, fmt, line_numbers=line_numbers))


@cli.command()
@click.option(
    "--queries",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="BEIR queries.jsonl ({_id, text} per line).",
)
@click.option(
    "--qrels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="Judgements: query-id<TAB>corpus-id<TAB>score.",
)
@click.option(
    "--mode",
    type=click.Choice(["search", "vsearch", "query"]),
    default="search",
    show_default=True,
    help="Which search to measure.",
)
@click.option(
    "-n",
    "limit",
    type=click.IntRange(min=10),
    default=100,
    show_default=True,
    help="Results retrieved per query.",
)
@click.option(
    "-c", "--collection", "collections", multiple=True, help="Only this collection (repeatable)."
)
@click.option(
    "--run-out", type=click.Path(dir_okay=False, path_type=Path), help="Write a TREC run file."
)
@click.option("--snippets", is_flag=True, help="Include passage extraction in the latency.")
@click.option("--no-expand", is_flag=True, help="Mode query: skip query expansion.")
@click.option("--no-rerank", is_flag=True, help="Mode query: skip reranking.")
@click.option("--json", "as_json", is_flag=True, help="Output as JSON.")
@pass_state
def bench(
    state: State,
    queries: Path,
    qrels: Path,
    mode: str,
    limit: int,
    collections: tuple[str, ...],
    run_out: Path | None,
    snippets: bool,
    no_expand: bool,
    no_rerank: bool,
    as_json: bool,
) -> None:
    """Measure retrieval quality on BEIR-format queries; a result's corpus id is its file stem."""
    report = state.engram.bench(
        queries, qrels, mode, limit, collections, run_out, snippets, not no_expand, not no_rerank
    )
    if as_json:
        echo_json(report)
        return
    say(
        f"mode={report.mode} queries={report.queries}  "
        f"nDCG@10={report.ndcg_at_10:.4f}  Recall@10={report.recall_at_10:.4f}  "
        f"Recall@100={report.recall_at_100:.4f}  MRR@10={report.mrr_at_10:.4f}  "
        f"p50={report.p50_ms:.1f}ms  p95={report.p95_ms:.1f}ms"
    )
