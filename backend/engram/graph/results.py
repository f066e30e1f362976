"""What graph operations return: frozen values; their JSON is engram.codec's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engram.codec import arg


@dataclass(frozen=True)
class NoteRef:
    """A note of the vault: collection-relative path, title, index id."""

    path: str
    title: str
    doc_id: int = arg(local=True)  # the index's row id, for this process only


@dataclass(frozen=True)
class LinkRef:
    """One link seen from a note: for backlinks `path` is the linking note, for outgoing
    links the file the link resolves to (None when it resolves to nothing)."""

    path: str | None
    title: str | None
    line: int  # line of the link in the note it is written in
    context: str  # that line's text
    target: str  # as written, without #heading or |display
    kind: str  # wikilink | markdown | frontmatter | canvas (a file node)
    embed: bool
    heading: str | None = None
    block: str | None = None
    display: str | None = None
    note: bool = False  # the other end is an indexed note (not an attachment)
    heading_found: bool | None = None  # None: no heading asked, or not checked
    block_found: bool | None = None

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"resolved": "resolved"}

    @property
    def resolved(self) -> bool:
        """Does the link lead to a file?"""
        return self.path is not None


@dataclass(frozen=True)
class UnresolvedLink:
    """A link to no file (or, when asked, to a missing heading or block)."""

    source: str  # the note it is written in
    target: str  # as written, without #heading or |display
    line: int
    context: str
    kind: str
    embed: bool
    heading: str | None = None
    block: str | None = None
    reason: str = "file"  # file | heading | block
    alias_of: str | None = None  # a note whose frontmatter alias this target is


@dataclass(frozen=True)
class Neighbor:
    """A note within N hops: hops ignoring direction, and how it is reached."""

    path: str
    title: str
    distance: int
    direction: str  # out (follow links) | in (follow backlinks) | both | mixed


@dataclass(frozen=True)
class PathStep:
    """A note on a path; `direction` is how the previous note relates to it."""

    path: str
    title: str
    direction: str | None  # out: previous links here; in: this links to previous; both


@dataclass(frozen=True)
class NotePath:
    """The shortest chain of links between two notes (empty `steps` when there is none)."""

    source: str = arg(wire="from")
    target: str = arg(wire="to")
    directed: bool = arg()
    steps: tuple[PathStep, ...] = arg()

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"found": "found", "length": "length"}

    @property
    def found(self) -> bool:
        """Is there a path?"""
        return bool(self.steps)

    @property
    def length(self) -> int:
        """Links on the path (0 when there is none)."""
        return max(len(self.steps) - 1, 0)


@dataclass(frozen=True)
class RankedNote:
    """A note with its score (0..1, the best is 1) and its link counts."""

    rank: int
    path: str
    title: str
    score: float
    backlinks: int  # notes linking here
    links: int  # notes linked from here
    hit: bool = False  # with --about: the note itself matched the query
    # with --about, why the note is there: how well it matches the query (0..1, None for a
    # note one link away from the matches) and how many of the matching notes link to it
    relevance: float | None = None
    topic_backlinks: int | None = None


@dataclass(frozen=True)
class Ranking:
    """Notes ranked by influence (PageRank) or bridging (betweenness), maybe about a query."""

    by: str
    about: str | None
    method: str  # how the scores were computed, e.g. sampling
    notes: tuple[RankedNote, ...]
    topic_size: int = 0  # with --about: how many notes matched the query


@dataclass(frozen=True)
class ThemeTag:
    """A tag and how many notes of a group carry it."""

    tag: str
    notes: int


@dataclass(frozen=True)
class Theme:
    """A community of densely linked notes, summarised by its top notes and tags."""

    id: int
    label: str
    size: int
    notes: tuple[NoteRef, ...]  # most influential first
    tags: tuple[ThemeTag, ...]


@dataclass(frozen=True)
class NoteLinks:
    """A note and its backlinks or outgoing links."""

    collection: str
    note: NoteRef
    links: tuple[LinkRef, ...]


@dataclass(frozen=True)
class Neighborhood:
    """The notes around one note, up to `depth` hops."""

    collection: str
    note: NoteRef
    depth: int
    direction: str
    neighbors: tuple[Neighbor, ...]
