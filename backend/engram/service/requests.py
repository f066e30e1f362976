"""What each operation with a route takes: one frozen request type per operation.

A request's fields are its facade method's parameters, in order and with the same defaults (a
test holds them together), so the same value is a facade call, an HTTP body, the daemon
client's message, an MCP tool's arguments and an OpenAPI schema. Bounds, wire names and
descriptions are written once, with `arg`; `local=True` marks a parameter only an in-process
call can give (a callable, an option the wire does not carry): a call that sets one runs in
the calling process. The vault an operation acts on is a local parameter too: the daemon acts
on the vault it serves (operations.py says which parameter names it).

Standard library only: the daemon-backed CLI builds these before deciding anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engram.codec import arg
from engram.memory.ledger_raw import MAX_LINES
from engram.memory.model import LIFECYCLE_STATES
from engram.store.filters import Filters

MAX_QUERY = 2000  # characters of a search query
MAX_TEXT = 1_000_000  # characters of a note's text or a fact's
MAX_PATH = 4096
MAX_NAME = 128  # a tag, an entity, a scope, an agent's name
MAX_ITEMS = 200
PROFILES = ("default", "planning", "incident", "handoff")  # memory/context.PROFILES
DIRECTIONS = ("both", "out", "in")


def _vault() -> Any:
    return arg(None, local=True, doc="the vault (the daemon acts on the one it serves)")


@dataclass(frozen=True)
class Search:
    """Keyword (BM25) search: the best documents for the words of a query."""

    query: str = arg(wire="q", max_len=MAX_QUERY, min_len=1, doc="Obsidian search syntax")
    n: int | None = arg(10, low=1, high=1000, doc="how many results; null: all of them")
    collections: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=MAX_NAME)
    min_score: float = arg(0.0, low=0.0, high=1.0, doc="leave out results scoring lower")
    full: bool = arg(False, doc="each result carries its document's whole text")
    filters: Filters | None = None
    with_snippets: bool = arg(True, local=True)


@dataclass(frozen=True)
class VSearch(Search):
    """Vector search: the passages closest in meaning to the query, one per document."""

    chunks: bool = arg(False, doc="each result lists its matching passages")


@dataclass(frozen=True)
class Query(VSearch):
    """Hybrid search: keyword and vector lists fused, expanded and reranked."""

    expand: bool = arg(True, doc="add the expansion model's rewrites of the query")
    rerank: bool = arg(True, doc="rerank the best candidates with the reranker")
    candidate_limit: int = arg(30, low=1, high=200, doc="how many candidates to rerank")
    explain: bool = arg(False, doc="each result tells how its score was made")
    min_similarity: float | None = arg(None, low=0.0, high=1.0, doc="vector list cut-off")


@dataclass(frozen=True)
class Get:
    """One document by path, collection/path, engram:// address or #docid."""

    ref: str = arg(max_len=MAX_PATH, min_len=1, doc="path, collection/path, engram://… or #docid")
    from_line: int | None = arg(None, wire="from", low=1, high=10_000_000)
    max_lines: int | None = arg(None, wire="lines", low=0, high=10_000_000)


@dataclass(frozen=True)
class Tags:
    """Every tag with its number of notes, as Obsidian's tag pane shows them."""

    collections: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=MAX_NAME)
    sort: str = arg("name", choices=("name", "count"), doc="siblings by name or most notes")


@dataclass(frozen=True)
class Recall:
    """Facts (and notes, with includeNotes) by relevance × importance × recency."""

    query: str = arg("", wire="q", max_len=MAX_QUERY, doc="empty: by importance and age")
    n: int = arg(10, low=1, high=200)
    fact_type: str | None = arg(None, wire="type", max_len=64, doc="only this type")
    tags: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=MAX_NAME, doc="all of these")
    scope: str | None = arg(None, max_len=MAX_NAME)
    since: str | None = arg(None, max_len=100, doc="from the start of: a date, 7d, last week")
    until: str | None = arg(None, max_len=100, doc="to the end of: a date, yesterday, 2025")
    tier_name: str | None = arg(
        None, wire="tier", choices=("structural", "potential", "contextual")
    )
    include_notes: bool = arg(False, doc="rank the vault's notes beside its facts")
    states: tuple[str, ...] | None = arg(
        None, choices=LIFECYCLE_STATES, doc="lifecycle states; null: active and dormant"
    )
    vault: str | None = _vault()
    agent: str | None = arg(None, max_len=MAX_NAME, doc="counts the recall for this agent")
    literal: bool = arg(
        False, doc="search q as written: no time words ('last week') or question read from it"
    )


@dataclass(frozen=True)
class MemoryContext:
    """Context for an agent within a token budget: facts by tier, daily notes, hits, links."""

    query: str | None = arg(None, wire="q", max_len=MAX_QUERY)
    profile: str = arg("default", choices=PROFILES)
    budget: int = arg(4000, low=0, high=200_000, doc="tokens (characters / 4)")
    vault: str | None = _vault()
    neighbours: Any = arg(None, local=True)  # a callable: in-process only


@dataclass(frozen=True)
class DeepSearch:
    """Local hybrid recall over facts and notes, fused with Convex's facts when syncing."""

    query: str = arg(wire="q", max_len=MAX_QUERY, min_len=1)
    n: int = arg(10, low=1, high=200)
    vault: str | None = _vault()


@dataclass(frozen=True)
class FactRef:
    """One fact by id."""

    ref: str = arg(wire="id", max_len=MAX_NAME, doc="the fact's id")
    vault: str | None = _vault()


@dataclass(frozen=True)
class RecentFacts:
    """The newest live facts, optionally of one type."""

    limit: int = arg(20, low=1, high=500)
    fact_type: str | None = arg(None, wire="type", max_len=64)
    vault: str | None = _vault()


@dataclass(frozen=True)
class FactAdd:
    """Store a new fact as a note."""

    text: str = arg(max_len=100_000, min_len=1)
    fact_type: str | None = arg(None, wire="type", max_len=64, doc="decision, preference, …")
    title: str | None = arg(None, max_len=500)
    importance: float | None = arg(None, low=0.0, high=1.0)
    confidence: float | None = arg(None, low=0.0, high=1.0)
    tags: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=MAX_NAME)
    entities: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=500)
    scope: str | None = arg(None, max_len=MAX_NAME, min_len=1)
    source: str | None = arg(None, max_len=MAX_NAME, min_len=1, doc="obsidian, mcp, engram…")
    created_by: str | None = arg(None, max_len=MAX_NAME, min_len=1)
    supersedes: str | None = arg(None, max_len=MAX_NAME, doc="the id of a fact it replaces")
    contradicts: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=MAX_NAME)
    vault: str | None = _vault()


@dataclass(frozen=True)
class FactUpdate:
    """Change some fields of a fact (its note is rewritten safely)."""

    ref: str = arg(wire="id", max_len=MAX_NAME, doc="the fact's id")
    text: str | None = arg(None, max_len=100_000)
    title: str | None = arg(None, max_len=500)
    fact_type: str | None = arg(None, wire="type", max_len=64)
    importance: float | None = arg(None, low=0.0, high=1.0)
    confidence: float | None = arg(None, low=0.0, high=1.0)
    tags: tuple[str, ...] | None = arg(None, max_items=MAX_ITEMS, max_len=MAX_NAME)
    entities: tuple[str, ...] | None = arg(None, max_items=MAX_ITEMS, max_len=500)
    scope: str | None = arg(None, max_len=MAX_NAME, min_len=1)
    lifecycle: str | None = arg(None, wire="lifecycleState", choices=LIFECYCLE_STATES)
    vault: str | None = _vault()


@dataclass(frozen=True)
class FactArchive:
    """Archive a fact: its note stays, its lifecycleState becomes archived (or pruned)."""

    ref: str = arg(wire="id", max_len=MAX_NAME, doc="the fact's id")
    prune: bool = arg(False, doc="pruned instead of archived")
    vault: str | None = _vault()


@dataclass(frozen=True)
class FactFromNote:
    """Store a note, or a selection of it, as a fact."""

    path: str = arg(max_len=MAX_PATH, note=True, doc="the note: a vault path or its name")
    selection: str | None = arg(None, max_len=100_000, doc="this text only, citing the note")
    vault: str | None = _vault()


@dataclass(frozen=True)
class NotePanel:
    """Frontmatter, fact, backlinks, related notes and index coverage of one note."""

    collection: str | None = arg(local=True, doc="the vault (the daemon acts on the one it serves)")
    rel: str = arg(wire="path", max_len=MAX_PATH, note=True, doc="the note's vault path")


@dataclass(frozen=True)
class Neighbors:
    """Notes within `depth` links of a note."""

    note: str = arg(wire="path", max_len=MAX_PATH, note=True, doc="the note: a path or a name")
    depth: int = arg(1, low=1, high=3)
    collection: str | None = _vault()
    direction: str = arg("both", choices=DIRECTIONS, doc="out: links, in: backlinks")


_HASH = "the sha256 or docid of the note as the client last saw it (409 when it changed)"
_DRY = "answer with the diff and write nothing"


@dataclass(frozen=True)
class NoteCreate:
    """Create a note from a path or a title, a body and frontmatter (never overwrites)."""

    path: str | None = arg(None, max_len=MAX_PATH, min_len=1, doc="default: title")
    title: str | None = arg(None, max_len=1000)
    body: str = arg("", max_len=MAX_TEXT)
    frontmatter: dict[str, Any] | None = arg(None, doc="properties, written as YAML")
    folder: str | None = arg(None, max_len=MAX_PATH, doc="where a titled note goes")
    dry_run: bool = arg(False, doc=_DRY)
    collection: str | None = _vault()


@dataclass(frozen=True)
class NoteEdit:
    """Append, prepend, replace a section, find/replace, set or remove properties."""

    note: str = arg(wire="path", max_len=MAX_PATH, doc="the note: a path or a name")
    append: str | None = arg(None, max_len=MAX_TEXT)
    prepend: str | None = arg(None, max_len=MAX_TEXT, doc="after the frontmatter")
    heading: str | None = arg(None, max_len=1000, doc="the section `section` replaces")
    section: str | None = arg(None, max_len=MAX_TEXT)
    find: str | None = arg(None, max_len=MAX_TEXT)
    replace: str | None = arg(None, max_len=MAX_TEXT)
    regex: bool = arg(False, doc="`find` is a regular expression (time-bounded)")
    count: int = arg(0, low=0, high=1_000_000, doc="replace at most this many; 0: all")
    properties: dict[str, Any] | None = arg(None, doc="properties to set")
    remove_properties: tuple[str, ...] = arg((), max_items=MAX_ITEMS, max_len=1000)
    expected_hash: str | None = arg(None, max_len=64, doc=_HASH)
    dry_run: bool = arg(False, doc=_DRY)
    collection: str | None = _vault()


@dataclass(frozen=True)
class NoteLink:
    """Add a [[link]] to `target` at the end of a section of the note at `path`."""

    source: str = arg(wire="path", max_len=MAX_PATH, doc="the note that links")
    target: str = arg(max_len=MAX_PATH, doc="the note linked to")
    section: str = arg("Related", max_len=1000, min_len=1, doc="the heading it goes under")
    display: str | None = arg(None, max_len=1000, doc="the link's text")
    expected_hash: str | None = arg(None, max_len=64, doc=_HASH)
    dry_run: bool = arg(False, doc=_DRY)
    collection: str | None = _vault()


@dataclass(frozen=True)
class NoteDelete:
    """Move a note to the vault's .trash folder (never erased)."""

    note: str = arg(wire="path", max_len=MAX_PATH, doc="the note: a path or a name")
    expected_hash: str | None = arg(None, max_len=64, doc=_HASH)
    dry_run: bool = arg(False, doc=_DRY)
    collection: str | None = _vault()


@dataclass(frozen=True)
class NoteMove:
    """Move or rename a note and rewrite every link to it, all files at once."""

    note: str = arg(wire="path", max_len=MAX_PATH, doc="the note: a path or a name")
    new_path: str = arg(wire="to", max_len=MAX_PATH, doc="its new vault path")
    expected_hash: str | None = arg(None, max_len=64, doc=_HASH)
    dry_run: bool = arg(False, doc=_DRY)
    collection: str | None = _vault()


@dataclass(frozen=True)
class LedgerAppend:
    """Append numbered lines to an agent's raw ledger of the day (all or none)."""

    agent: str = arg(max_len=64, min_len=1, doc="letters, digits, '_', '.', '-'")
    lines: tuple[tuple[int, Any], ...] = arg(
        max_items=MAX_LINES, doc='[number, {"role", "text", "ts"?, …}] pairs'
    )
    vault: str | None = _vault()


@dataclass(frozen=True)
class LedgerObserve:
    """Score a day's raw lines (one agent's or all) into observation lines."""

    agent: str | None = arg(None, max_len=64, min_len=1)
    day: str | None = arg(None, max_len=100, min_len=1, doc="a date or a phrase; default today")
    vault: str | None = _vault()


@dataclass(frozen=True)
class Reflect:
    """Regenerate a week's reflection (default: the last week that ended)."""

    week: str | None = arg(None, max_len=100, min_len=1, doc="2026-W10, a date or a phrase")
    vault: str | None = _vault()


@dataclass(frozen=True)
class SyncNow:
    """Push and pull facts with Convex now (waits for a run already going)."""

    vault: str | None = _vault()
    push: bool = True
    pull: bool = True
