"""Tool arguments that are not an operation's request type: the tools' own extras (output
budget, paging, collection) and the arguments of operations that have no route yet (their
fields are the facade method's parameters, as a request type's are)."""

from __future__ import annotations

from dataclasses import dataclass

from engram.codec import arg
from engram.mcp_server.output import DEFAULT_MAX_CHARS

MAX_PATH = 4096
MAX_TEXT = 100_000
EDGE_TYPES = ("wiki_link", "embed", "tag", "frontmatter_relation")


@dataclass(frozen=True)
class Nothing:
    """No arguments."""


@dataclass(frozen=True)
class Budget:
    """How much text a tool's answer may take."""

    max_chars: int = arg(
        DEFAULT_MAX_CHARS,
        low=1000,
        high=200_000,
        doc="most characters to return (4 per token); a longer answer is cut and says so",
    )


@dataclass(frozen=True)
class Mode(Budget):
    """The search tool's modes."""

    mode: str = arg(
        "hybrid", choices=("hybrid", "keyword", "semantic"), doc="keyword: exact words only"
    )


@dataclass(frozen=True)
class InCollection(Budget):
    """Tools over one collection's notes and links."""

    collection: str | None = arg(
        None, max_len=200, doc="the collection (default: the vault's; engram:// names its own)"
    )


@dataclass(frozen=True)
class Page(InCollection):
    """A list given a page at a time."""

    cursor: str | None = arg(None, max_len=20, doc="nextCursor of the previous page")
    limit: int = arg(20, low=1, high=500, doc="items per page")


@dataclass(frozen=True)
class TagsPage(Budget):
    """The tag list a page at a time (tags span every collection)."""

    cursor: str | None = arg(None, max_len=20, doc="nextCursor of the previous page")
    limit: int = arg(100, low=1, high=2000, doc="tags per page")


@dataclass(frozen=True)
class Edges(Page):
    """graph_neighbors' typed edges."""

    edge_types: tuple[str, ...] = arg(
        (),
        max_items=4,
        choices=EDGE_TYPES,
        doc="follow only these typed edges (tags and unresolved targets become nodes too)",
    )


# -- operations without a route: their facade parameters ---------------------------------


@dataclass(frozen=True)
class MultiGet:
    """Several notes at once."""

    paths: tuple[str, ...] = arg(
        max_items=200, max_len=MAX_PATH, min_len=1, doc="paths, #docids or globs like notes/*.md"
    )
    max_bytes: int = arg(10_240, low=1, high=10_000_000, doc="skip files larger than this")
    max_lines: int | None = arg(None, low=0, high=1_000_000, doc="most lines per note")


@dataclass(frozen=True)
class ActiveNoteArgs:
    """The note open in Obsidian."""

    include_text: bool = arg(False, doc="also return the note's text")


@dataclass(frozen=True)
class Checkpoint:
    """Where the session is."""

    working_on: str = arg(max_len=2000, min_len=1, doc="what you are doing now")
    focus: str | None = arg(None, max_len=2000, doc="what matters most right now")
    blocked: str | None = arg(None, max_len=2000, doc="what is in the way")
    urgent: bool = arg(False, doc="the work is urgent")


@dataclass(frozen=True)
class EndSession:
    """The end of a session."""

    summary: str | None = arg(
        None, max_len=MAX_TEXT, doc="what was done and what comes next (stored as a handoff)"
    )


@dataclass(frozen=True)
class Message:
    """One line of a transcript."""

    role: str = arg(max_len=64, min_len=1, doc="user, assistant, tool, system…")
    text: str = arg(max_len=60_000, doc="what was said")
    ts: str | None = arg(None, max_len=40, doc="when (ISO 8601; default now)")
    id: str | None = arg(None, max_len=128, doc="the message's id: a repeat is appended once")


@dataclass(frozen=True)
class Log:
    """Messages for the raw ledger."""

    messages: tuple[Message, ...] = arg(max_items=100, doc="oldest first, 1 to 100")


@dataclass(frozen=True)
class Backlinks:
    """Links to a note."""

    note: str = arg(max_len=MAX_PATH, min_len=1, doc="path, file name, title, alias or URI")


@dataclass(frozen=True)
class NotePath:
    """The chain of links between two notes."""

    source: str = arg(max_len=MAX_PATH, min_len=1, doc="where the path starts (a note)")
    target: str = arg(max_len=MAX_PATH, min_len=1, doc="where it ends (a note)")
    directed: bool = arg(False, doc="follow links only in their written direction")


@dataclass(frozen=True)
class Rank:
    """Influential or bridging notes."""

    about: str | None = arg(None, max_len=2000, doc="a topic (search words); none: all notes")
    by: str = arg("influence", choices=("influence", "bridging"), doc="PageRank or betweenness")
    n: int = arg(20, low=1, high=100, doc="how many notes")


@dataclass(frozen=True)
class Themes:
    """Communities of linked notes."""

    min_size: int = arg(2, low=1, high=1000, doc="smallest cluster to report")
