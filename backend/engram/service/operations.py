"""Every public name of the facade, classified once (docs/architecture.md has the table).

- OPERATIONS: what a user does to the index or a vault. Each is a read (safe to run again
  in-process when the daemon dies before answering) or a write (never run twice: the daemon
  may have done it). Those with a daemon route run in the daemon when one serves this index;
  `vault` ones only when it serves the vault asked for (the daemon acts on its own vault).
- LOCAL: operations that belong to the process asking, with the reason.
- INTERNAL: the facade's own plumbing that the faces and the daemon use to do their job.

A test fails when a public name of `Engram` is in none of these or in two, when a route named
here is not served, or when an operation with a route has no parity test.
Standard library only: the CLI reads this before deciding anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal

from engram.service import requests as rq

Effect = Literal["read", "write"]


@dataclass(frozen=True)
class Operation:
    """One user-visible operation on the index or a vault.

    One with a route is declared whole here: its request type (service/requests.py), the
    key its reply puts the result under (None: the result is the reply), the result's type
    ("module:Name", a list of them when `many`), and `model` when a read may run a model (it
    then runs on the daemon's model threads). The route's decoding, the daemon client's call,
    the MCP tools' schemas and the OpenAPI document all come from this."""

    name: str  # the Engram method
    effect: Effect
    route: str | None = None  # "METHOD /path" when the daemon serves it
    vault: str | None = None  # its parameter naming the vault: the daemon acts on its own
    request: type | None = None
    reply: str | None = None
    result: str | None = None
    many: bool = False
    model: bool = False
    created: bool = False  # a write that makes something new answers 201
    locked: bool = False  # a write that takes its own lock: it never waits for the writer


def _read(name: str, route: str | None = None, vault: bool = False) -> Operation:
    return Operation(name, "read", route, "vault" if vault else None)


def _write(name: str, route: str | None = None, vault: bool = False) -> Operation:
    return Operation(name, "write", route, "vault" if vault else None)


FACT = "engram.memory.model:Fact"
CHANGE = "engram.vault.changes:NoteChange"
RESULTS = "engram.search.results:SearchResult"


OPERATIONS: tuple[Operation, ...] = (
    # search and documents
    Operation("search", "read", "POST /v1/search", None, rq.Search, "results", RESULTS, True),
    Operation(
        "vsearch", "read", "POST /v1/vsearch", None, rq.VSearch, "results", RESULTS, True, True
    ),
    Operation(
        "query_run",
        "read",
        "POST /v1/query",
        None,
        rq.Query,
        None,
        "engram.search.results:QueryRun",
        model=True,
    ),
    Operation(
        "get",
        "read",
        "GET /v1/documents",
        None,
        rq.Get,
        "document",
        "engram.search.results:Document",
    ),
    _read("multi_get"),
    _read("related_notes"),
    # the index
    _read("status"),
    _read("language_report"),
    _read("ls"),
    _read("collection_list"),
    _read("collection_show"),
    _read("context_list"),
    _read("embedding_state"),
    _read("model_status"),
    _read("query_stages"),
    _read("check_links"),
    Operation("tags", "read", "GET /v1/tags", None, rq.Tags, None, "engram.service.tags:TagList"),
    _write("update"),
    _write("embed"),
    _write("rebuild"),
    _write("cleanup"),
    # the graph
    _read("backlinks"),
    _read("links"),
    _read("unresolved"),
    _read("orphans"),
    Operation(
        "neighbors",
        "read",
        "GET /v1/graph/neighbors",
        "collection",
        rq.Neighbors,
        None,
        "engram.graph.results:Neighborhood",
    ),
    _read("path"),
    _read("rank"),
    _read("themes"),
    _read("typed_neighbors"),
    _read("graph_export"),  # with `output`, writes a file outside the index and vaults
    _write("graph_colours"),
    # notes
    Operation(
        "note_panel",
        "read",
        "GET /v1/notes/metadata",
        "collection",
        rq.NotePanel,
        None,
        "engram.service.panel:NotePanel",
    ),
    Operation(
        "note_create",
        "write",
        "POST /v1/notes",
        "collection",
        rq.NoteCreate,
        "change",
        CHANGE,
        created=True,
    ),
    Operation(
        "note_edit", "write", "POST /v1/notes/edit", "collection", rq.NoteEdit, "change", CHANGE
    ),
    Operation(
        "note_move", "write", "POST /v1/notes/move", "collection", rq.NoteMove, "change", CHANGE
    ),
    Operation(
        "note_delete",
        "write",
        "POST /v1/notes/delete",
        "collection",
        rq.NoteDelete,
        "change",
        CHANGE,
    ),
    Operation(
        "note_link", "write", "POST /v1/notes/link", "collection", rq.NoteLink, "change", CHANGE
    ),
    # memory
    Operation("fact_get", "read", "GET /v1/facts/{id}", "vault", rq.FactRef, "fact", FACT),
    _read("fact_list"),
    Operation(
        "recent_facts", "read", "GET /v1/facts", "vault", rq.RecentFacts, "facts", FACT, True
    ),
    # recall counts each hit as an access: bookkeeping, so a re-run costs one extra count
    Operation(
        "recall",
        "read",
        "POST /v1/recall",
        "vault",
        rq.Recall,
        None,
        "engram.memory.results:RecallResult",
        model=True,
    ),
    Operation(
        "memory_context",
        "read",
        "POST /v1/memory/context",
        "vault",
        rq.MemoryContext,
        None,
        "engram.memory.results:ContextResult",
        model=True,
    ),
    Operation(
        "deep_search",
        "read",
        "POST /v1/memory/deep-search",
        "vault",
        rq.DeepSearch,
        None,
        "engram.service.deep:DeepSearchResult",
        model=True,
    ),
    _read("wake"),
    Operation(
        "fact_add", "write", "POST /v1/facts", "vault", rq.FactAdd, "fact", FACT, created=True
    ),
    Operation("fact_update", "write", "PATCH /v1/facts/{id}", "vault", rq.FactUpdate, "fact", FACT),
    Operation(
        "fact_archive", "write", "DELETE /v1/facts/{id}", "vault", rq.FactArchive, "fact", FACT
    ),
    Operation(
        "fact_from_note",
        "write",
        "POST /v1/facts/from-note",
        "vault",
        rq.FactFromNote,
        "fact",
        FACT,
        created=True,
    ),
    _write("fact_supersede"),
    _write("fact_sweep"),
    _write("daily"),
    _write("checkpoint"),
    _write("end_session"),
    # the raw ledger and reflections
    # appends take the file's lock and never rewrite a line: they need not wait for the writer
    Operation(
        "ledger_append",
        "write",
        "POST /v1/ledger/raw",
        "vault",
        rq.LedgerAppend,
        None,
        "engram.memory.ledger_raw:AppendResult",
        created=True,
        locked=True,
    ),
    Operation(
        "ledger_observe",
        "write",
        "POST /v1/ledger/observe",
        "vault",
        rq.LedgerObserve,
        None,
        "engram.memory.observe:ObserveResult",
    ),
    _write("ledger_archive"),
    Operation(
        "reflect",
        "write",
        "POST /v1/reflect",
        "vault",
        rq.Reflect,
        None,
        "engram.service.reflect:ReflectResult",
    ),
    # sync
    _read("sync_status"),
    _read("sync_pending"),
    _read("sync_check"),
    _read("cloud_search"),
    Operation(
        "sync_now",
        "write",
        "POST /v1/sync",
        "vault",
        rq.SyncNow,
        "report",
        "engram.sync.engine:SyncReport",
    ),
)

LOCAL: dict[str, str] = {
    "collection_add": "edits the config file, which each process reads when it starts",
    "collection_remove": "edits the config file",
    "collection_rename": "edits the config file",
    "context_add": "edits the config file",
    "context_rm": "edits the config file",
    "init_vault": "edits the config file and writes the vault's template",
    "sync_init": "keeps the Convex token in this user's keyring and edits the config file",
    "models_list": "this machine's model files",
    "models_info": "reads a model file of this machine",
    "models_pull": "downloads into this machine's model cache, with progress on this terminal",
    "use_embed_model": "prepares a model in this machine's cache and edits the config file",
    "fit_embed_model": "edits the config file (init's choice of embedding model)",
    "doctor": "checks this process: its Python, its models, its view of the files",
    "bench": "measures retrieval in this process (latency is what it reports)",
}

INTERNAL: dict[str, str] = {
    "settings": "the resolved configuration",
    "recovered": "writes a crashed process left, settled when the index opened",
    "db": "the index",
    "parse_pool": "the parsing workers",
    "clock": "the time facts are stamped with (tests set it)",
    "zone": "the local calendar's zone time words are read in (tests set it)",
    "close": "releases the index and the workers",
    "isolate_parsing": "the daemon parses every note in a worker",
    "defer_generated_embedding": "the daemon embeds generated notes in its job after a write",
    "stop_parsing": "the daemon's shutdown",
    "query": "query_run's results alone (recall's relevance)",
    "parse": "a query string to a parsed query",
    "result_from_hit": "a keyword hit to a result",
    "result_from_vector_hit": "a vector hit to a result",
    "embedder": "the embedding model, loaded once",
    "reranker": "the reranker, loaded once",
    "generator": "the expansion model, loaded once",
    "model_spec": "a role's configured model",
    "model_path": "a role's model file",
    "model_checks": "doctor's model checks",
    "prepare_default_embedder": "embed's first step",
    "embed_if_available": "the daemon's index job",
    "update_changed": "the daemon's index job for reported paths",
    "expand_changes": "the daemon's watcher: a folder event to the notes it touches",
    "after_update": "derived work after an update",
    "require_collection": "a collection by name, or a helpful error",
    "edit_config": "the one way the config file changes",
    "context_for": "the contexts of a path",
    "graph": "the graph service (service/graph.py), which the graph operations hand over to",
    "graph_files": "graph-index.json, export, typed neighbours, colours (service/graph_files.py)",
    "memory": "vaults, the fact index and reading facts (service/memory.py)",
    "ledger": "the raw ledger, observe and the archive (service/ledger.py)",
    "reflections": "weekly reflections (service/reflect.py); the daemon's weekly check",
    "vault_collection": "the collection of a vault folder (engram serve --vault)",
    "vault_name": "the collection of a vault name or folder",
    "note_path": "a client's note path, refused outside the vault",
    "note_title": "a note's title (the daemon's active note)",
    "fact_relevance": "recall's ranking step",
    "neighbours_for": "memory context's link walk",
    "sync_engine": "the sync engine (the daemon's sync loop drives it)",
    "sync_configured": "whether a vault syncs",
    "keyring_source": "where the Convex token is read (given by the composition root)",
    "sync_backoff": "the sync client's retry delays (tests shorten them)",
    "sync_timeout": "the sync client's time limit (tests shorten it)",
}


# What discovery.json tells clients the daemon can do beyond the basics, and the operation
# that provides each (a capability whose operation is missing would be announced falsely).
CAPABILITIES: dict[str, str] = {
    "vsearch": "vsearch",
    "query": "query_run",
    "recall": "recall",
    "facts": "fact_add",
    "graph": "neighbors",
    "sync": "sync_now",
    "notes.write": "note_move",
}


def result_type(op: Operation) -> Any:
    """The type of an operation's result (its module is imported on first use)."""
    assert op.result is not None
    module, name = op.result.split(":")
    cls = getattr(import_module(module), name)
    return list[cls] if op.many else cls  # type: ignore[valid-type]


def by_name() -> dict[str, Operation]:
    """The operations by method name."""
    return {op.name: op for op in OPERATIONS}
