"""Result values shared by every search mode and every output format (their JSON is the
codec's, service/codec.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from engram.codec import Score, arg


@dataclass(frozen=True)
class SearchResult:
    """One document found by a search, with its best passage."""

    docid: str
    collection: str
    path: str  # relative to the collection
    title: str
    score: Score  # 0..1, higher is better
    snippet: str
    line: int
    highlights: tuple[tuple[int, int], ...] = ()
    page: int | None = None  # a PDF's page holding the snippet
    context: str | None = None
    fact_type: str | None = None
    body: str | None = None  # the full text, with --full
    passages: tuple[Passage, ...] = ()
    explain: dict[str, Any] | None = None
    # the query as searched when a word no note holds was corrected ("showing results for")
    spelling: str | None = None
    # why a prefix or phrase most notes hold was left out of the ranking or ranked within the
    # newest notes only (search/broad.py)
    notice: str | None = None
    doc_id: int = arg(0, local=True)  # the index's row id, for this process only

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"uri": "uri"}

    @property
    def uri(self) -> str:
        """engram://collection/path, the address `get` and contexts use (a PDF's with
        `#page=N`, the page of its snippet)."""
        page = f"#page={self.page}" if self.page is not None else ""
        return f"engram://{self.collection}/{self.path}{page}"

    @property
    def where(self) -> str:
        """collection/path with the place of the snippet: `:line`, or `#page=N` in a PDF."""
        place = f"#page={self.page}" if self.page is not None else f":{self.line}"
        return f"{self.collection}/{self.path}{place}"


@dataclass(frozen=True)
class Passage:
    """A matching passage inside a document (for --chunks)."""

    snippet: str
    line: int
    end_line: int
    score: Score
    highlights: tuple[tuple[int, int], ...] = ()
    page: int | None = None  # a PDF's page holding the passage


@dataclass(frozen=True)
class Document:
    """A whole (or partial) document returned by get / multi-get."""

    docid: str
    collection: str
    path: str
    title: str
    text: str
    from_line: int = 1
    total_lines: int = 0
    context: str | None = None
    note: str | None = None  # e.g. why a file was skipped or truncated
    fs_path: str | None = arg(None, wire="file")

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"uri": "uri"}

    @property
    def uri(self) -> str:
        """engram://collection/path."""
        return f"engram://{self.collection}/{self.path}"


@dataclass(frozen=True)
class QueryRun:
    """Results of a hybrid query, with which stages ran and any notices for the user."""

    results: list[SearchResult]
    stages: dict[str, str]
    notices: tuple[str, ...] = ()
    expansions: tuple[str, ...] = ()
