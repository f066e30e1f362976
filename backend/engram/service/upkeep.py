"""Status, cleanup, doctor and the retrieval benchmark."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

from engram import __version__
from engram.codec import arg
from engram.config import ConfigError, load_config_file
from engram.errors import InvalidInputError
from engram.index.languages import LanguageReport
from engram.search import evaluate
from engram.search.results import SearchResult
from engram.service.collections import overlaps
from engram.service.core import Check
from engram.service.model_health import ModelState
from engram.service.semantic import EmbeddingState
from engram.store import admin, vectors
from engram.store import documents as docs
from engram.store.db import driver_info
from engram.vault import journal

if TYPE_CHECKING:
    from engram.service.core import Core

LINK_SAMPLE = 500  # notes whose links `doctor` resolves again (all with --full)
LINKS_SHOWN = 3


@dataclass(frozen=True)
class IndexFile:
    """The index file: its name, where it is, how big, last updated, migrations applied."""

    name: str
    path: str
    bytes: int  # with its -wal and -shm files
    last_update: str | None
    migrations: int


@dataclass(frozen=True)
class CollectionCount:
    """A configured collection and how many documents the index holds of it."""

    name: str
    path: str
    pattern: str
    documents: int


@dataclass(frozen=True)
class VectorSearch:
    """Whether vector search works in this process, and why not."""

    available: bool
    error: str | None


@dataclass(frozen=True)
class FileKinds:
    """PDFs and canvases indexed, the passages each gave, and PDFs with no text layer."""

    pdfs: int = 0
    pdf_passages: int = 0
    canvases: int = 0
    canvas_passages: int = 0
    no_text: tuple[str, ...] = ()  # collection/path of PDFs that are only images (scans?)


@dataclass(frozen=True)
class Status:
    """What is indexed, where, and how fresh (`engram status`)."""

    version: str
    index: IndexFile
    config: str  # the config file
    collections: tuple[CollectionCount, ...]
    documents: int
    links: int
    tags: int  # distinct
    contents: int  # distinct texts
    warnings: int  # documents indexed with warnings
    vector_search: VectorSearch
    embeddings: EmbeddingState
    models: dict[str, ModelState]
    query_stages: dict[str, str]
    languages: LanguageReport
    overlaps: tuple[str, ...] = ()  # collections over the same notes, each with its fix
    files: FileKinds = FileKinds()


@dataclass(frozen=True)
class CleanupReport:
    """What cleanup dropped and how much the index file shrank."""

    documents_removed: int  # of collections no longer configured
    contents_removed: int  # texts no document holds
    vectors_removed: int
    bytes_before: int
    bytes_after: int


@dataclass(frozen=True)
class BenchReport:
    """`engram bench`: mean retrieval quality over the judged queries, and ranking latency."""

    mode: str
    ndcg_at_10: float = arg(wire="ndcg@10")
    recall_at_10: float = arg(wire="recall@10")
    recall_at_100: float = arg(wire="recall@100")
    mrr_at_10: float = arg(wire="mrr@10")
    queries: int = arg()
    p50_ms: float = arg(wire="p50_ms")
    p95_ms: float = arg(wire="p95_ms")


class Operations(Protocol):
    """The facade's operations that status, doctor and bench report on or measure."""

    def embedding_state(self) -> EmbeddingState: ...
    def model_status(self) -> dict[str, ModelState]: ...
    def query_stages(self) -> dict[str, str]: ...
    def model_checks(self) -> list[Check]: ...
    def search(self, *args: Any, **kwargs: Any) -> list[SearchResult]: ...
    def vsearch(self, *args: Any, **kwargs: Any) -> list[SearchResult]: ...
    def query(self, *args: Any, **kwargs: Any) -> list[SearchResult]: ...


class UpkeepService:
    """status, language_report, cleanup, doctor, check_links, bench: over the index `core`,
    reporting on and measuring the facade's `ops`."""

    def __init__(self, core: Core, ops: Operations) -> None:
        self._core = core
        self._ops = ops

    def status(self) -> Status:
        """What is indexed, where, and how fresh."""
        conn = self._core.db.conn
        counts = admin.collection_counts(conn)
        path = self._core.settings.db_path
        size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
        index = IndexFile(
            self._core.settings.index_name,
            str(path),
            size,
            docs.get_meta(conn, "last_update"),
            len(admin.applied_migrations(conn)),
        )
        collections = tuple(
            CollectionCount(c.name, str(c.path), c.pattern, counts.get(c.name, (0, None))[0])
            for c in self._core.settings.collections
        )
        totals = admin.totals(conn)
        return Status(
            version=__version__,
            index=index,
            config=str(self._core.settings.config_file),
            collections=collections,
            documents=totals["documents"],
            links=totals["links"],
            tags=totals["tags"],
            contents=totals["contents"],
            warnings=totals["warnings"],
            vector_search=VectorSearch(self._core.db.vec_available, self._core.db.vec_error),
            embeddings=self._ops.embedding_state(),
            models=self._ops.model_status(),
            query_stages=self._ops.query_stages(),
            languages=self.language_report(),
            overlaps=tuple(o.describe() for o in overlaps(self._core.settings.collections)),
            files=_file_kinds(conn),
        )

    def language_report(self) -> LanguageReport:
        """Notes per language, and advice when the embedder does not serve a meaningful share."""
        from engram.index import languages

        return languages.report(self._core.db.conn, self._core.settings.embed_model)

    def cleanup(self) -> CleanupReport:
        """Drop documents of removed collections and orphaned texts, then compact the file."""
        with self._core.db.write() as conn:
            stale = docs.documents_outside(conn, [c.name for c in self._core.settings.collections])
            removed = docs.delete_documents(conn, stale)
            orphans = docs.delete_orphan_content(conn)
            freed = vectors.delete_orphans(conn)
            if freed:
                vectors.bump_generation(conn)
        before = self._core.settings.db_path.stat().st_size
        admin.vacuum(self._core.db.conn)
        after = self._core.settings.db_path.stat().st_size
        return CleanupReport(removed, orphans, freed, before, after)

    def doctor(self, full: bool = False) -> list[Check]:
        """Check the installation, configuration and index; each problem with a fix. Stored
        links are resolved again for a sample of each collection's notes (all with `full`)."""
        checks = _platform_checks() + self._config_checks()
        vec = "ok" if self._core.db.vec_available else "warn"
        checks.append(
            Check(
                "sqlite-vec",
                vec,
                "loaded" if vec == "ok" else str(self._core.db.vec_error),
                None if vec == "ok" else "pip install sqlite-vec sqlean-py",
            )
        )
        checks += self._ops.model_checks()
        advice = self.language_report().advice
        checks.append(
            Check(
                "note languages",
                "warn" if advice else "ok",
                advice.split(":", 1)[0] if advice else "served by the embedding model",
                advice.split(": ", 1)[1] if advice else None,
            )
        )
        checks += self._index_checks()
        checks += self._write_checks()
        checks += [self.check_links(c.name, full) for c in self._core.settings.collections]
        warned = admin.documents_with_warnings(self._core.db.conn, limit=5)
        if warned:
            listed = ", ".join(f"{r[0]}/{r[1]}" for r in warned)
            checks.append(
                Check(
                    "notes with warnings",
                    "warn",
                    listed,
                    "fix their frontmatter or encoding; engram update re-reads them",
                )
            )
        return checks

    def _config_checks(self) -> list[Check]:
        """The config file parses, and every collection's folder is there."""
        settings = self._core.settings
        try:
            load_config_file(settings.config_file)
            checks = [Check("config", "ok", str(settings.config_file))]
        except ConfigError as exc:
            checks = [Check("config", "fail", exc.message, "fix or remove the config file")]
        if not settings.collections:
            checks.append(
                Check(
                    "collections",
                    "warn",
                    "none configured",
                    "engram collection add PATH --name NAME",
                )
            )
        for o in overlaps(settings.collections):
            fix = f"engram collection remove {o.inner}"
            checks.append(Check(f"overlapping collection {o.inner}", "warn", o.describe(), fix))
        for c in settings.collections:
            ok = c.path.is_dir()
            checks.append(
                Check(
                    f"collection {c.name}",
                    "ok" if ok else "fail",
                    str(c.path),
                    None
                    if ok
                    else f"the folder is gone: engram collection remove {c.name}, or restore it",
                )
            )
        return checks

    def _index_checks(self) -> list[Check]:
        """SQLite's own integrity check and FTS5's, each with its repair."""
        conn = self._core.db.conn
        integrity = admin.quick_check(conn)
        fts = admin.fts_integrity(conn)
        return [
            Check(
                "index integrity",
                "ok" if integrity == "ok" else "fail",
                integrity,
                None
                if integrity == "ok"
                else "engram cleanup, or delete the index "
                f"file {self._core.settings.db_path} and run engram update",
            ),
            Check(
                "full-text index",
                "ok" if fts is None else "fail",
                fts or "consistent",
                None if fts is None else "delete the index file and run engram update",
            ),
        ]

    def _write_checks(self) -> list[Check]:
        """Interrupted writes: settled when the index opened, still open, temp files left."""
        out = [
            Check(
                "interrupted write",
                "warn" if r.changed or r.kept else "ok",
                f"{r.label}: {r.outcome} when Engram started ({len(r.paths)} files)"
                + (
                    f"; changed since, left as they are: {', '.join(r.changed)}"
                    if r.changed
                    else ""
                )
                + (f"; unknown temporary files kept: {', '.join(r.kept)}" if r.kept else ""),
                "compare those files with what you expect" if r.changed or r.kept else None,
            )
            for r in self._core.recovered
        ]
        for c in self._core.settings.collections:
            if not c.path.is_dir():
                continue
            running = journal.pending(c.path)
            if running:
                out.append(
                    Check(
                        f"unfinished writes in {c.name}",
                        "warn",
                        "; ".join(running[:5]),
                        "another Engram process is writing; if none is, run any engram command "
                        f"to finish or undo them (journal: {c.path / journal.JOURNAL_DIR})",
                    )
                )
            temps = journal.leftover_temps(c.path)
            if temps:
                out.append(
                    Check(
                        f"temporary files in {c.name}",
                        "warn",
                        ", ".join(temps[:5]) + (" ..." if len(temps) > 5 else ""),
                        "left by an interrupted write; they hold no note of their own: delete "
                        "them (no Engram process must be writing)",
                    )
                )
        return out

    def check_links(self, collection: str, full: bool = False) -> Check:
        """Doctor's link check: do a collection's stored links (of a sample of notes, or all
        with `full`) resolve as they would now? (see index/verify.py)"""
        from engram.index import verify

        conn = self._core.db.conn
        ids = admin.document_ids(conn, collection)
        sample = None if full or len(ids) <= LINK_SAMPLE else random.sample(ids, LINK_SAMPLE)
        found = verify.link_drift(conn, collection, sample)
        scope = (
            f"all {len(ids):,} notes"
            if sample is None
            else f"a sample of {len(sample):,} of {len(ids):,} notes; --full for all"
        )
        if not found.drift and not found.misattributed:
            detail = f"checked {_count(found.checked, 'link')}: each resolves as stored ({scope})"
            return Check(f"links {collection}", "ok", detail)
        drifted = f"{len(found.drift):,} of {found.checked:,} checked links"
        parts = [f"{drifted} resolve otherwise than stored ({scope})"]
        if found.misattributed:
            parts.append(
                f"{_count(found.misattributed, 'link')} in all point at a note id that is not "
                "the note at their path"
            )
        shown = "; ".join(d.describe() for d in found.drift[:LINKS_SHOWN])
        return Check(
            f"links {collection}",
            "fail",
            "; ".join(parts) + (f": {shown}" if shown else ""),
            f"engram update --force -c {collection} (re-reads every note and resolves every "
            "link again)",
        )

    def bench(
        self,
        queries: Path,
        qrels: Path,
        mode: str = "search",
        n: int = 100,
        collections: tuple[str, ...] = (),
        run_out: Path | None = None,
        snippets: bool = False,
        expand: bool = True,
        rerank: bool = True,
    ) -> BenchReport:
        """Run BEIR-format queries; report nDCG@10, Recall@10/100, MRR@10 and latency.

        Latency is of ranking only unless `snippets` (passages cost extra per result).
        `expand`/`rerank` apply to mode `query`.
        """
        searchers: dict[str, Callable[..., list[SearchResult]]] = {
            "search": self._ops.search,
            "vsearch": self._ops.vsearch,
            "query": partial(self._ops.query, expand=expand, rerank=rerank),
        }
        if mode not in searchers:
            raise InvalidInputError(f"unknown mode {mode!r}; use one of: {', '.join(searchers)}")
        try:
            judged = evaluate.load_qrels(qrels)
            todo = [(q, t) for q, t in evaluate.load_queries(queries) if q in judged]
        except (OSError, ValueError) as exc:
            raise InvalidInputError(str(exc)) from None
        if not todo:
            raise InvalidInputError("no query in the queries file has judgements in the qrels")
        run: dict[str, dict[str, float]] = {}
        latencies = []
        search = searchers[mode]
        search(_plain(todo[0][1]), n=n, collections=collections)  # warm caches and models
        for qid, text in todo:
            started = time.perf_counter()
            results = search(_plain(text), n=n, collections=collections, with_snippets=snippets)
            latencies.append((time.perf_counter() - started) * 1000)
            scores: dict[str, float] = {}
            for rank, r in enumerate(results):
                # the order is the ranking; scores can tie after blending
                scores.setdefault(PurePosixPath(r.path).stem, float(len(results) - rank))
            run[qid] = scores
        if run_out is not None:
            run_out.write_text("\n".join(evaluate.run_lines(run)) + "\n", encoding="utf-8")
        metrics = evaluate.evaluate(run, {q: judged[q] for q, _ in todo})
        return BenchReport(
            mode,
            metrics["ndcg@10"],
            metrics["recall@10"],
            metrics["recall@100"],
            metrics["mrr@10"],
            int(metrics["queries"]),
            evaluate.percentile(latencies, 50),
            evaluate.percentile(latencies, 95),
        )


def _platform_checks() -> list[Check]:
    """Python's version and what the SQLite driver can do (FTS5, loading extensions)."""
    drv = driver_info()
    return [
        Check(
            "python",
            "ok" if sys.version_info >= (3, 11) else "fail",
            sys.version.split()[0],
            "install Python 3.11 or newer",
        ),
        Check("sqlite", "ok", f"{drv.name} {drv.sqlite_version}"),
        Check(
            "fts5",
            "ok" if drv.fts5 else "fail",
            "available" if drv.fts5 else "missing",
            None if drv.fts5 else "pip install sqlean-py (SQLite with FTS5)",
        ),
        Check(
            "extension loading",
            "ok" if drv.can_load_extensions else "fail",
            "supported" if drv.can_load_extensions else "not supported",
            None if drv.can_load_extensions else "pip install sqlean-py",
        ),
    ]


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _plain(text: str) -> str:
    """Benchmark queries are natural language: keep filter syntax out of the way."""
    return " ".join(w.lstrip("-") for w in text.replace(":", " ").replace('"', " ").split())


def _file_kinds(conn: Any) -> FileKinds:
    """PDFs and canvases in the index, for status."""
    from engram.vault.pdf import NO_TEXT

    found = admin.file_kinds(conn, NO_TEXT)
    (pdfs, pdf_passages), (canvases, canvas_passages) = (
        found["counts"]["pdf"],
        found["counts"]["canvas"],
    )
    return FileKinds(pdfs, pdf_passages, canvases, canvas_passages, tuple(found["no_text"]))
