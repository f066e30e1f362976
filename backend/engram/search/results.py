"""Result values shared by every search mode and every output format."""

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

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (documented in docs/cli.md and docs/http-api.md)."""
        out: dict[str, Any] = {
            "docid": self.docid,
            "collection": self.collection,
            "path": self.path,
            "uri": self.uri,
            "title": self.title,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "highlights": [list(h) for h in self.highlights],
            "line": self.line,
            "context": self.context,
            "factType": self.fact_type,
        }
        if self.body is not None:
            out["body"] = self.body
        if self.passages:
            out["passages"] = [p.to_dict() for p in self.passages]
        if self.explain is not None:
            out["explain"] = self.explain
        return out


@dataclass(frozen=True)
class Passage:
    """A matching passage inside a document (for --chunks)."""

    snippet: str
    line: int
    end_line: int
    score: float
    highlights: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON shape of a passage."""
        return {
            "snippet": self.snippet,
            "line": self.line,
            "endLine": self.end_line,
            "score": round(self.score, 4),
            "highlights": [list(h) for h in self.highlights],
        }


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

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of a document."""
        return {
            "docid": self.docid,
            "collection": self.collection,
            "path": self.path,
            "uri": f"engram://{self.collection}/{self.path}",
            "title": self.title,
            "fromLine": self.from_line,
            "totalLines": self.total_lines,
            "context": self.context,
            "note": self.note,
            "file": self.fs_path,
            "text": self.text,
        }
