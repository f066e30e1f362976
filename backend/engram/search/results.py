"""Result values shared by every search mode and every output format (their JSON shape is
service/wire.py's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SearchResult:
    """One document found by a search, with its best passage."""

    docid: str
    collection: str
    path: str  # relative to the collection
    title: str
    score: float  # 0..1, higher is better
    snippet: str
    line: int
    highlights: tuple[tuple[int, int], ...] = ()
    context: str | None = None
    fact_type: str | None = None
    body: str | None = None  # the full text, with --full
    passages: tuple[Passage, ...] = ()
    explain: dict[str, Any] | None = None
    doc_id: int = field(default=0, compare=False)

    @property
    def uri(self) -> str:
        """engram://collection/path, the address `get` and contexts use."""
        return f"engram://{self.collection}/{self.path}"


@dataclass(frozen=True)
class Passage:
    """A matching passage inside a document (for --chunks)."""

    snippet: str
    line: int
    end_line: int
    score: float
    highlights: tuple[tuple[int, int], ...] = ()


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
    fs_path: str | None = None
