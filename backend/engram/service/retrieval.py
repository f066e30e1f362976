"""Indexing and retrieval: update, search, get, multi-get."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.errors import InvalidInputError, NotFoundError
from engram.search import bm25, snippets, spelling
from engram.search.query import ParsedQuery, QueryError, parse_query
from engram.search.results import Document, SearchResult
from engram.service.lanes import with_lane
from engram.service.names import as_link, section
from engram.store import admin, pages
from engram.store.filters import Filters
from engram.store.fts import bigrams
from engram.store.search import FtsHit, content_text
from engram.vault.fsio import UnsafePathError, read_note, safe_join
from engram.vault.kinds import derived_text
from engram.vault.scan import matches

if TYPE_CHECKING:
    from engram.index import indexer
    from engram.service.core import Core
    from engram.service.names import Named
    from engram.vault.parse import Link

AfterUpdate = Callable[
    ["indexer.UpdateReport", "list[indexer.CollectionSpec]", "dict[str, set[str]] | None"], None
]
ByName = Callable[[str], "Named"]

_LINE_SUFFIX = re.compile(r"^(.*?):(\d+)$")
_PAGE_SUFFIX = re.compile(r"^(.*)#page=(\d{1,9})$", re.IGNORECASE)
_DOCID = re.compile(r"^#?([0-9a-fA-F]{6,64})$")
DEFAULT_MAX_BYTES = 10_240


class RetrievalService:
    """update, search, get and multi-get over the core's index; `after_update` is the
    facade's derived work once files are indexed (links, graph files, facts)."""

    def __init__(
        self, core: Core, after_update: AfterUpdate, by_name: ByName | None = None
    ) -> None:
        self._core = core
        self._after_update = after_update
        self._by_name = by_name  # a title, alias or [[link]] -> its note (service/names.py)

    def update(
        self,
        collections: Iterable[str] = (),
        progress: indexer.Progress | None = None,
        only_paths: dict[str, set[str]] | None = None,
        force: bool = False,
    ) -> indexer.UpdateReport:
        """Re-index the collections (all by default) incrementally; `force` re-reads every
        note and resolves every link again (the repair `engram doctor` suggests)."""
        from engram.index import indexer  # parsing libraries load only when indexing

        names = list(collections)
        cols = (
            [self._core.require_collection(n) for n in names]
            if names
            else list(self._core.settings.collections)
        )
        specs = [indexer.CollectionSpec(c.name, c.path, c.pattern, c.ignore) for c in cols]
        report = indexer.update(
            self._core.db,
            specs,
            self._core.settings.max_file_bytes,
            progress,
            only_paths,
            self._core.parse_pool,
            force,
        )
        self._after_update(report, specs, only_paths)
        return report

    def parse(
        self, query: str, collections: Iterable[str] = (), filters: Filters | None = None
    ) -> ParsedQuery:
        """Parse a query and merge flag filters; unknown collections are an error. The
        person's notes are kept unless the query asks for Engram's memory (service/lanes.py)."""
        try:
            q = parse_query(query)
        except QueryError as exc:
            raise InvalidInputError(str(exc)) from None
        extra = filters or Filters()
        names = tuple(collections)
        q = q.with_filters(Filters(collections=names) if names else Filters())
        q = q.with_filters(extra)
        for name in q.filters.collections:
            self._core.require_collection(name)
        return with_lane(q, self._core.settings)

    def search(
        self,
        query: str,
        n: int | None = 10,
        collections: Iterable[str] = (),
        min_score: float = 0.0,
        full: bool = False,
        filters: Filters | None = None,
        with_snippets: bool = True,
    ) -> list[SearchResult]:
        """BM25 search: documents ranked by keyword relevance, best passage highlighted.

        `with_snippets=False` skips passages (benchmarks that only need the ranking).
        """
        q = self.parse(query, collections, filters)
        if not q.has_terms and q.filters.is_empty():
            raise InvalidInputError("empty query: give words to search for, or filters")
        conn = self._core.db.conn
        spelled = spelling.correct(conn, q)  # a word no note holds: its closest indexed word
        q = spelled.query
        ranking = bm25.ranked(conn, q, n, with_snippets, connect=lambda: self._core.db.conn)
        results = [
            self.result_from_hit(
                conn, h, q, bm25.normalize(h.bm25) if h.bm25 else 0.0, full, with_snippets
            )
            for h in ranking.hits
        ]
        if spelled.corrected:
            results = [replace(r, spelling=q.text) for r in results]
        if ranking.notices:
            results = [replace(r, notice="; ".join(ranking.notices)) for r in results]
        return [r for r in results if r.score >= min_score]

    def result_from_hit(
        self,
        conn: Any,
        hit: FtsHit,
        q: ParsedQuery,
        score: float,
        full: bool = False,
        with_snippet: bool = True,
    ) -> SearchResult:
        """A SearchResult for a matched document: snippet, line, context."""
        if not (with_snippet or full):
            return self._bare_result(hit, score)
        text = content_text(conn, hit.hash) or ""
        snip = snippets.from_marked(hit.snippet, text, hit.body_line)
        if snip is None:
            needles = (
                [g for run in q.cjk for g in bigrams(run)]
                + list(q.terms)
                + list(q.prefixes)
                + list(q.phrases)
            )
            snip = snippets.around(text, hit.body_line, needles)
        return SearchResult(
            docid=hit.hash[:6],
            collection=hit.collection,
            path=hit.path,
            title=hit.title,
            score=score,
            snippet=snip.text,
            line=snip.line,
            highlights=snip.highlights,
            page=pages.page_of_line(text, snip.line) if pages.is_paged(hit.path) else None,
            context=self._core.context_for(hit.collection, hit.path),
            fact_type=hit.fact_type,
            body=pages.readable(text) if full else None,
            doc_id=hit.id,
        )

    def _bare_result(self, hit: FtsHit, score: float) -> SearchResult:
        return SearchResult(
            docid=hit.hash[:6],
            collection=hit.collection,
            path=hit.path,
            title=hit.title,
            score=score,
            snippet="",
            line=hit.body_line,
            context=self._core.context_for(hit.collection, hit.path),
            fact_type=hit.fact_type,
            doc_id=hit.id,
        )

    def get(self, ref: str, from_line: int | None = None, max_lines: int | None = None) -> Document:
        """One document by path, engram:// URI or #docid, optionally `:LINE` and a line count;
        a PDF's page with `#page=N` (its lines count from the top of the PDF's text)."""
        target, page = _split_page(ref)
        if page is not None:
            row = self._find(target)
            if pages.is_paged(row["path"]):
                return self._page(row, page, from_line, max_lines)
            target = ref  # `#page=` in a note's own name
        target, line = _split_line(target)
        row = self._find(target)
        return self._document(row, from_line or line or 1, max_lines)

    def _page(self, row: Any, page: int, from_line: int | None, max_lines: int | None) -> Document:
        """Page `page` of an indexed PDF, from `from_line` (a line of the PDF's text) on."""
        text = content_text(self._core.db.conn, row["hash"]) or ""
        span = pages.page_span(text, page)
        if span is None:
            raise NotFoundError(
                f"{row['collection']}/{row['path']} has {pages.page_count(text)} pages, not {page}"
            )
        start, end, first = span
        lines = text[start:end].split("\n")
        skip = max(0, (from_line or first) - first)
        chosen = lines[skip:] if max_lines is None else lines[skip : skip + max_lines]
        return self._make_document(
            row,
            "\n".join(chosen),
            first + skip,
            text.count("\n") + 1,
            note=f"page {page} of {pages.page_count(text)}",
        )

    def multi_get(
        self, spec: str, max_bytes: int = DEFAULT_MAX_BYTES, max_lines: int | None = None
    ) -> list[Document]:
        """Several documents: a glob, a comma-separated list, or #docids."""
        items = [s.strip() for s in re.split(r"[,\n]", spec) if s.strip()]
        if not items:
            raise InvalidInputError("nothing to get: give a glob, a list of paths or #docids")
        rows: list[Any] = []
        missing: list[str] = []
        conn = self._core.db.conn
        for item in items:
            if as_link(item) is None and any(ch in item for ch in "*?[{"):  # a glob
                pattern = item.removeprefix("engram://")
                found = [
                    r
                    for r in admin.all_documents(conn)
                    if matches(pattern, f"{r['collection']}/{r['path']}")
                    or matches(pattern, r["path"])
                ]
                rows += found
                if not found:
                    missing.append(item)
            else:
                try:
                    rows.append(self._find(_split_line(item)[0]))
                except NotFoundError:
                    missing.append(item)
        if not rows:
            raise NotFoundError(f"nothing matched {spec!r}")
        unique = list({r["id"]: r for r in rows}.values())
        out = []
        for row in unique:
            if row["size"] > max_bytes:
                out.append(
                    self._document(
                        row,
                        1,
                        0,
                        note=f"skipped: {row['size']:,} bytes is over --max-bytes {max_bytes:,}",
                    )
                )
            else:
                out.append(self._document(row, 1, max_lines))
        out += [
            Document(docid="", collection="", path=m, title=m, text="", note="not found")
            for m in missing
        ]
        return out

    def _find(self, target: str) -> Any:
        conn = self._core.db.conn
        target = target.strip()
        m = _DOCID.match(target)
        if m and (target.startswith("#") or len(target) == 6):
            rows = admin.documents_by_docid(conn, m.group(1))
            if rows:
                return rows[0]
            if target.startswith("#"):
                raise NotFoundError(f"no document with docid {target}")
        rel = target.removeprefix("engram://")
        name, _, rest = rel.partition("/")
        if rest and self._core.settings.collection(name):
            row = admin.document_by_path(conn, name, rest)
            if row is None and not rest.endswith(".md"):
                row = admin.document_by_path(conn, name, rest + ".md")
            if row is not None:
                return row
        for candidate in (rel, rel + ".md"):
            rows = admin.documents_by_rel_path(conn, candidate)
            if rows:
                return rows[0]
        row = self._find_on_disk(Path(target))
        if row is not None:
            return row
        if self._by_name is None:
            raise NotFoundError(f"no indexed document matches {target!r}", self._suggest(target))
        try:
            named = self._by_name(target)  # a title, an alias, a [[link]]
        except NotFoundError as exc:
            if exc.message.startswith("several notes match"):
                raise
            close = list(dict.fromkeys(exc.suggestions + self._suggest(target)))[:5]
            raise NotFoundError(exc.message, close) from None
        row = admin.document_by_path(conn, named.collection, named.path)
        if row is None:
            raise NotFoundError(f"no indexed document matches {target!r}")
        return row

    def get_link(
        self, link: Link, from_line: int | None = None, max_lines: int | None = None
    ) -> Document:
        """The note a `[[link]]` names, from its `#heading`'s line to the end of that section,
        or the paragraph of its `#^block` (unless lines are asked for)."""
        row = self._find(f"[[{link.target}]]")
        if from_line is None:
            col = self._core.settings.collection(row["collection"])
            span = section(self._current_text(row, col.path if col else None), link)
            if span is not None:
                from_line = span[0]
                max_lines = span[1] if max_lines is None else max_lines
        return self._document(row, from_line or 1, max_lines)

    def _find_on_disk(self, path: Path) -> Any | None:
        try:
            full = path.expanduser().resolve()
        except (OSError, RuntimeError):
            return None
        for c in self._core.settings.collections:
            root = c.path.resolve()
            if root in full.parents:
                return admin.document_by_path(
                    self._core.db.conn, c.name, full.relative_to(root).as_posix()
                )
        return None

    def _suggest(self, target: str) -> list[str]:
        rows = admin.all_documents(self._core.db.conn)
        names = {f"{r['collection']}/{r['path']}": r for r in rows}
        key = target.lower()
        close = difflib.get_close_matches(key, [n.lower() for n in names], n=3, cutoff=0.5)
        by_title = {r["title"].lower(): f"{r['collection']}/{r['path']}" for r in rows}
        close_titles = difflib.get_close_matches(Path(key).stem, list(by_title), n=3, cutoff=0.6)
        lower_to_name = {n.lower(): n for n in names}
        out = [lower_to_name[c] for c in close] + [by_title[t] for t in close_titles]
        return list(dict.fromkeys(out))[:5]

    def _document(
        self, row: Any, from_line: int, max_lines: int | None, note: str | None = None
    ) -> Document:
        col = self._core.settings.collection(row["collection"])
        text = self._current_text(row, col.path if col else None)
        lines = text.split("\n")
        start = max(1, from_line)
        chosen = (
            lines[start - 1 :] if max_lines is None else lines[start - 1 : start - 1 + max_lines]
        )
        return self._make_document(row, "\n".join(chosen), start, len(lines), note)

    def _make_document(
        self, row: Any, text: str, start: int, total: int, note: str | None = None
    ) -> Document:
        col = self._core.settings.collection(row["collection"])
        fs_path = col.path / row["path"] if col else None
        return Document(
            docid=row["hash"][:6],
            collection=row["collection"],
            path=row["path"],
            title=row["title"],
            text=text,
            from_line=start,
            total_lines=total,
            context=self._core.context_for(row["collection"], row["path"]),
            note=note,
            fs_path=str(fs_path) if fs_path else None,
        )

    def _current_text(self, row: Any, root: Path | None) -> str:
        """The file as it is on disk now (the source of truth), else the indexed copy.

        The file is read only inside its collection (`safe_join`, the boundary writes use):
        a note replaced by a symlink out of the vault serves the copy indexed before. A PDF
        or a canvas is its indexed text (its pages; its nodes as markdown), page breaks as
        empty lines.
        """
        if derived_text(row["path"]):
            return pages.readable(content_text(self._core.db.conn, row["hash"]) or "")
        if root is not None:
            try:
                return read_note(
                    safe_join(root, row["path"]), self._core.settings.max_file_bytes
                ).text
            except (UnsafePathError, OSError, ValueError, RuntimeError):
                pass
        return content_text(self._core.db.conn, row["hash"]) or ""


def _split_page(ref: str) -> tuple[str, int | None]:
    m = _PAGE_SUFFIX.match(ref.strip())
    if m:
        return m.group(1), int(m.group(2))
    return ref, None


def _split_line(ref: str) -> tuple[str, int | None]:
    m = _LINE_SUFFIX.match(ref.strip())
    if m:
        return m.group(1), int(m.group(2))
    return ref, None
