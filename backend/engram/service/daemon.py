"""The Engram a face gets when `engram serve` runs for its index: the same operations, with
those the daemon serves (operations.py names their routes) sent to it over loopback HTTP.

Everything else runs in a local Engram opened on first need, and so does an operation the
daemon cannot answer the way this call asks (another vault than the daemon's, an option its
route does not take). When the daemon stops answering, the rule is applied here and nowhere
else: a read runs again in-process; a write whose request was sent may have been done, so it
is not run again and the caller is told to look first (UnavailableError). The daemon is looked
up on each call, so a long-lived process (`engram mcp`) uses one started after it.

Only the standard library is imported up front: a search through the daemon stays light.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlencode

from engram.errors import (
    ConflictError,
    EngramError,
    InvalidInputError,
    NoSpaceError,
    NotFoundError,
    NotWritableError,
    UnavailableError,
)
from engram.service import operations as ops
from engram.service import wire

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.memory.ledger_raw import AppendResult
    from engram.memory.model import Fact
    from engram.memory.observe import ObserveResult
    from engram.memory.results import ContextResult, RecallHit
    from engram.search.results import Document, SearchResult
    from engram.service import Engram
    from engram.service.deep import DeepSearchResult
    from engram.service.hybrid import QueryRun
    from engram.service.panel import NotePanel
    from engram.service.reflect import ReflectResult
    from engram.service.upkeep import Status
    from engram.store.filters import Filters
    from engram.sync.engine import SyncReport

T = TypeVar("T")
log = logging.getLogger(__name__)
TIMEOUT_SECONDS = 300.0
ERRORS: dict[str, type[EngramError]] = {
    "not_found": NotFoundError,
    "invalid_input": InvalidInputError,
    "invalid_json": InvalidInputError,
    "conflict": ConflictError,
    "unavailable": UnavailableError,
    "no_space": NoSpaceError,
    "not_writable": NotWritableError,
}
ALL_STATES = ("active", "dormant", "merged", "archived", "pruned")  # recall's allStates
MAX_LINES = 1000  # POST /v1/ledger/raw takes this many lines (memory/ledger_raw.MAX_LINES)
OPERATIONS = ops.by_name()


@dataclass(frozen=True)
class ServedStatus:
    """Status as the process that answered sees it: the daemon's `GET /v1/status` document
    (its own shape, docs/http-api.md, passed on as sent) with its pid and port, else this
    process's index status (its models included)."""

    daemon_pid: int | None = None  # None: no daemon answered, this process did
    daemon_port: int | None = None
    daemon_status: Mapping[str, Any] | None = None
    status: Status | None = None


class DaemonUnreachable(ConnectionError):
    """Nothing answered at the daemon's address; `sent` when the request may have reached it."""

    def __init__(self, message: str, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


class DaemonClient:
    """A small JSON client for the daemon's HTTP API on loopback."""

    def __init__(
        self, port: int, token: str, pid: int | None = None, collection: str | None = None
    ) -> None:
        self.port = port
        self.token = token
        self.pid = pid
        self.collection = collection  # the vault its memory and note routes act on

    def request(
        self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        """Call the API; domain errors come back as the same EngramError classes."""
        if params:
            path += "?" + urlencode({k: v for k, v in params.items() if v is not None})
        headers = {
            "Host": f"127.0.0.1:{self.port}",
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/json",
        }
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        import http.client  # only when a daemon is live: http.client brings ssl and email

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT_SECONDS)
        sent = False
        try:
            conn.request(method, path, body=payload, headers=headers)
            sent = True
            resp = conn.getresponse()
            raw = resp.read()
        except (ConnectionError, TimeoutError, OSError, http.client.HTTPException) as exc:
            raise DaemonUnreachable(str(exc) or type(exc).__name__, sent) from None
        finally:
            conn.close()
        return _reply(resp.status, raw)

    def rotate_token(self) -> bool:
        """Ask the daemon to replace its token; False when it no longer answers."""
        try:
            self.request("POST", "/v1/token/rotate")
        except DaemonUnreachable:
            return False
        return True


def _reply(status: int, raw: bytes) -> Any:
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        raise EngramError(f"the daemon sent a reply that is not JSON (HTTP {status})") from None
    if status >= 400:
        err = (data or {}).get("error") or {}
        cls = ERRORS.get(err.get("code", ""), EngramError)
        error = cls(str(err.get("message") or f"HTTP {status}"))
        if err.get("hint"):
            error.hint = str(err["hint"])
        raise error
    return data


class DaemonEngram:
    """The facade over a live daemon; every name it does not define is the local Engram's."""

    def __init__(
        self,
        find: Callable[[], DaemonClient | None],
        settings: Settings,
        open_local: Callable[[], Engram],
    ) -> None:
        self.settings = settings
        self._find = find
        self._open_local = open_local
        self._local: Engram | None = None

    def daemon(self) -> DaemonClient | None:
        """The live daemon of this index now, if any (looked up on each call: a daemon
        started after this process is used, one that stopped is not)."""
        return self._find()

    @property
    def local(self) -> Engram:
        """The in-process Engram, opened on first need."""
        if self._local is None:
            self._local = self._open_local()
        return self._local

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.local, name)

    def close(self) -> None:
        """Close the local Engram if one was opened."""
        if self._local is not None:
            self._local.close()
            self._local = None

    def __enter__(self) -> DaemonEngram:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the one place that decides where a call runs --------------------------------------

    def _serves(self, vault: str | None) -> bool:
        """Does the daemon act on this vault (a name, a folder or the default one)?"""
        found = self.settings.find_vault(vault)
        return found is not None and self._serves_collection(found.name)

    def _serves_collection(self, name: str | None) -> bool:
        daemon = self.daemon()
        return daemon is not None and daemon.collection is not None and daemon.collection == name

    def _run(
        self,
        name: str,
        remote: Callable[[DaemonClient], T] | None,
        local: Callable[[Engram], T],
    ) -> T:
        """`remote(daemon)` when there is a daemon and the call can go to it, else
        `local(engram)`; a daemon that stops answering is handled by the rule above."""
        op = OPERATIONS[name]
        daemon = self.daemon() if remote is not None else None
        if daemon is None or remote is None:
            return local(self.local)
        try:
            return remote(daemon)
        except DaemonUnreachable as exc:
            if op.effect == "write" and exc.sent:
                raise UnavailableError(
                    f"the daemon (pid {daemon.pid}) stopped while it ran {name}: it may have "
                    "been done or not, so it was not run again",
                    "look at the vault (or the fact list) before running the command again",
                ) from None
            log.info("the daemon stopped answering (%s); working in-process", exc)
            return local(self.local)

    # -- the daemon itself ----------------------------------------------------------------

    def served_status(self) -> ServedStatus:
        """Status as the process that answers sees it, saying which one that is: the daemon's
        `GET /v1/status`, else this process's index status and models."""
        daemon = self.daemon()
        if daemon is not None:
            try:
                data = daemon.request("GET", "/v1/status")
                return ServedStatus(daemon.pid, daemon.port, daemon_status=data)
            except DaemonUnreachable:
                pass  # stopped since it wrote its file: this process answers
        return ServedStatus(status=self.local.status())

    def active_note(self) -> tuple[DaemonClient | None, dict[str, Any] | None]:
        """The live daemon and the note Obsidian last reported open to it (the plugin tells
        only the daemon); (None, None) when no daemon answers."""
        daemon = self.daemon()
        if daemon is None:
            return None, None
        try:
            note: dict[str, Any] | None = daemon.request("GET", "/v1/active-note")["activeNote"]
        except DaemonUnreachable:
            return None, None
        return daemon, note

    # -- search and documents --------------------------------------------------------------

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
        """BM25 search (Engram.search)."""
        cols = tuple(collections)
        body = _query_body("search", query, n, cols, min_score, full, filters)
        remote = None
        if body is not None and with_snippets:
            remote = _results_of(body)
        return self._run(
            "search",
            remote,
            lambda e: e.search(query, n, cols, min_score, full, filters, with_snippets),
        )

    def vsearch(
        self,
        query: str,
        n: int | None = 10,
        collections: Iterable[str] = (),
        min_score: float = 0.0,
        full: bool = False,
        filters: Filters | None = None,
        with_snippets: bool = True,
        chunks: bool = False,
    ) -> list[SearchResult]:
        """Vector search (Engram.vsearch)."""
        cols = tuple(collections)
        body = _query_body("vsearch", query, n, cols, min_score, full, filters, chunks=chunks)
        remote = None
        if body is not None and with_snippets:
            remote = _results_of(body)
        return self._run(
            "vsearch",
            remote,
            lambda e: e.vsearch(query, n, cols, min_score, full, filters, with_snippets, chunks),
        )

    def query_run(
        self,
        query: str,
        n: int | None = 10,
        collections: Iterable[str] = (),
        min_score: float = 0.0,
        full: bool = False,
        filters: Filters | None = None,
        with_snippets: bool = True,
        chunks: bool = False,
        expand: bool = True,
        rerank: bool = True,
        candidate_limit: int = 30,
        explain: bool = False,
        min_similarity: float | None = None,
    ) -> QueryRun:
        """Hybrid search with its stages and notices (Engram.query_run)."""
        cols = tuple(collections)
        options = {
            "chunks": chunks,
            "expand": expand,
            "rerank": rerank,
            "candidateLimit": candidate_limit,
            "explain": explain,
        }
        body = _query_body("query", query, n, cols, min_score, full, filters, **options)
        remote = None
        if body is not None and with_snippets and min_similarity is None:
            remote = _post(body, wire.query_run_from_json)
        return self._run(
            "query_run",
            remote,
            lambda e: e.query_run(
                query,
                n,
                cols,
                min_score,
                full,
                filters,
                with_snippets,
                chunks,
                expand,
                rerank,
                candidate_limit,
                explain,
                min_similarity,
            ),
        )

    def get(self, ref: str, from_line: int | None = None, max_lines: int | None = None) -> Document:
        """One document (Engram.get)."""
        params = {"ref": _absolute_if_local(ref), "from": from_line, "lines": max_lines}
        remote = _call("GET", "/v1/documents", _document, params=params)
        return self._run("get", remote, lambda e: e.get(ref, from_line, max_lines))

    # -- memory ----------------------------------------------------------------------------

    def recall(
        self,
        query: str = "",
        n: int = 10,
        fact_type: str | None = None,
        tags: Iterable[str] = (),
        scope: str | None = None,
        since: str | None = None,
        until: str | None = None,
        tier_name: str | None = None,
        include_notes: bool = False,
        states: tuple[str, ...] | None = None,
        vault: str | None = None,
        agent: str | None = None,
    ) -> list[RecallHit]:
        """Facts by relevance × importance × recency (Engram.recall)."""
        tags = list(tags)
        body = _present(
            q=query,
            n=n,
            type=fact_type,
            tags=tags,
            scope=scope,
            since=since,
            until=until,
            tier=tier_name,
            includeNotes=include_notes,
            allStates=states is not None,
            agent=agent,
        )
        remote = None
        if (
            self._serves(vault)
            and states in (None, ALL_STATES)
            and 1 <= n <= 200
            and len(agent or "") <= 128
        ):
            remote = _call("POST", "/v1/recall", _recall_hits, body)
        return self._run(
            "recall",
            remote,
            lambda e: e.recall(
                query,
                n,
                fact_type,
                tags,
                scope,
                since,
                until,
                tier_name,
                include_notes,
                states,
                vault,
                agent,
            ),
        )

    def memory_context(
        self,
        query: str | None = None,
        profile: str = "default",
        budget: int = 4000,
        vault: str | None = None,
        neighbours: Any = None,
    ) -> ContextResult:
        """Context for an agent within a token budget (Engram.memory_context)."""
        body = _present(q=query or None, profile=profile, budget=budget)
        remote = None
        if self._serves(vault) and neighbours is None:
            remote = _post_to("/v1/memory/context", body, wire.context_from_json)
        return self._run(
            "memory_context",
            remote,
            lambda e: e.memory_context(query, profile, budget, vault, neighbours),
        )

    def deep_search(self, query: str, n: int = 10, vault: str | None = None) -> DeepSearchResult:
        """Local recall fused with Convex's facts (Engram.deep_search)."""
        remote = None
        if self._serves(vault) and 1 <= n <= 200:
            remote = _post_to(
                "/v1/memory/deep-search", {"q": query, "n": n}, wire.deep_search_from_json
            )
        return self._run("deep_search", remote, lambda e: e.deep_search(query, n, vault))

    def fact_add(
        self,
        text: str,
        fact_type: str | None = None,
        title: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        tags: Iterable[str] = (),
        entities: Iterable[str] = (),
        scope: str | None = None,
        source: str | None = None,
        created_by: str | None = None,
        supersedes: str | None = None,
        contradicts: Iterable[str] = (),
        vault: str | None = None,
    ) -> Fact:
        """Store a fact note (Engram.fact_add)."""
        tags, entities, contradicts = list(tags), list(entities), list(contradicts)
        body = _present(
            text=text,
            type=fact_type,
            title=title,
            importance=importance,
            confidence=confidence,
            tags=tags,
            entities=entities,
            scope=scope,
            source=source or "engram",  # the route's own default is the plugin's
            createdBy=created_by,
        )
        remote = None
        if self._serves(vault) and supersedes is None and not contradicts:
            remote = _fact_reply("POST", "/v1/facts", body)
        return self._run(
            "fact_add",
            remote,
            lambda e: e.fact_add(
                text,
                fact_type,
                title,
                importance,
                confidence,
                tags,
                entities,
                scope,
                source,
                created_by,
                supersedes,
                contradicts,
                vault,
            ),
        )

    def fact_get(self, ref: str, vault: str | None = None) -> Fact:
        """One fact (Engram.fact_get)."""
        remote = None
        if self._serves(vault) and _fact_id(ref):
            remote = _fact_reply("GET", f"/v1/facts/{quote(ref)}", None)
        return self._run("fact_get", remote, lambda e: e.fact_get(ref, vault))

    def recent_facts(
        self, limit: int = 20, fact_type: str | None = None, vault: str | None = None
    ) -> list[Fact]:
        """The newest live facts (Engram.recent_facts)."""
        remote = None
        if self._serves(vault) and 1 <= limit <= 500:
            params = {"limit": limit, "type": fact_type}
            remote = _call("GET", "/v1/facts", _facts, params=params)
        return self._run("recent_facts", remote, lambda e: e.recent_facts(limit, fact_type, vault))

    def fact_update(
        self,
        ref: str,
        text: str | None = None,
        title: str | None = None,
        fact_type: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        tags: Iterable[str] | None = None,
        entities: Iterable[str] | None = None,
        scope: str | None = None,
        lifecycle: str | None = None,
        vault: str | None = None,
    ) -> Fact:
        """Change some fields of a fact (Engram.fact_update)."""
        tags = None if tags is None else list(tags)
        entities = None if entities is None else list(entities)
        body = {
            k: v
            for k, v in {
                "text": text,
                "title": title,
                "type": fact_type,
                "importance": importance,
                "confidence": confidence,
                "tags": tags,
                "entities": entities,
                "scope": scope,
                "lifecycleState": lifecycle,
            }.items()
            if v is not None
        }
        remote = None
        if self._serves(vault) and _fact_id(ref) and body:
            remote = _fact_reply("PATCH", f"/v1/facts/{quote(ref)}", body)
        return self._run(
            "fact_update",
            remote,
            lambda e: e.fact_update(
                ref, text, title, fact_type, importance, confidence, tags, entities, scope,
                lifecycle, vault,
            ),
        )  # fmt: skip

    def fact_archive(self, ref: str, prune: bool = False, vault: str | None = None) -> Fact:
        """Archive a fact (Engram.fact_archive)."""
        remote = None
        if self._serves(vault) and _fact_id(ref) and not prune:
            remote = _fact_reply("DELETE", f"/v1/facts/{quote(ref)}", None)
        return self._run("fact_archive", remote, lambda e: e.fact_archive(ref, prune, vault))

    def note_panel(self, collection: str, rel: str) -> NotePanel:
        """What the fact panel shows for a note (Engram.note_panel)."""
        remote = None
        if self._serves_collection(collection):
            remote = _call(
                "GET", "/v1/notes/metadata", wire.note_panel_from_json, params={"path": rel}
            )
        return self._run("note_panel", remote, lambda e: e.note_panel(collection, rel))

    # -- the raw ledger and reflections -----------------------------------------------------

    def ledger_append(
        self, agent: str, lines: Iterable[tuple[int, Any]], vault: str | None = None
    ) -> AppendResult:
        """Append to an agent's raw ledger (Engram.ledger_append)."""
        lines = list(lines)
        remote = None
        numbered = [n for n, _ in lines] == list(range(1, len(lines) + 1))  # as the route does
        if self._serves(vault) and numbered and 1 <= len(lines) <= MAX_LINES and len(agent) <= 64:
            body = {"agent": agent, "lines": [obj for _, obj in lines]}
            remote = _post_to("/v1/ledger/raw", body, wire.append_result_from_json)
        return self._run("ledger_append", remote, lambda e: e.ledger_append(agent, lines, vault))

    def ledger_observe(
        self, agent: str | None = None, day: str | None = None, vault: str | None = None
    ) -> ObserveResult:
        """Score a day's raw lines into observation lines (Engram.ledger_observe)."""
        remote = None
        if self._serves(vault) and len(agent or "") <= 64 and len(day or "") <= 100:
            body = _present(agent=agent or None, day=day or None)
            remote = _post_to("/v1/ledger/observe", body, wire.observe_result_from_json)
        return self._run("ledger_observe", remote, lambda e: e.ledger_observe(agent, day, vault))

    def reflect(self, week: str | None = None, vault: str | None = None) -> ReflectResult:
        """Regenerate a week's reflection (Engram.reflect)."""
        remote = None
        if self._serves(vault) and len(week or "") <= 100:
            body = _present(week=week or None)
            remote = _post_to("/v1/reflect", body, wire.reflect_result_from_json)
        return self._run("reflect", remote, lambda e: e.reflect(week, vault))

    # -- sync ------------------------------------------------------------------------------

    def sync_now(
        self, vault: str | None = None, push: bool = True, pull: bool = True
    ) -> SyncReport:
        """Push and pull facts with Convex (Engram.sync_now); through the daemon, its writer
        and its sync loop do the run."""
        remote = None
        if self._serves(vault) and (push or pull):
            remote = _call("POST", "/v1/sync", _sync_report, {"push": push, "pull": pull})
        return self._run("sync_now", remote, lambda e: e.sync_now(vault, push, pull))


def _present(**fields: Any) -> dict[str, Any]:
    """The fields given a value (None and empty lists are the routes' defaults)."""
    return {k: v for k, v in fields.items() if v is not None and v != []}


def _fact_id(ref: str) -> bool:
    """Can the fact routes take this reference? (They take ids; the facade also takes
    file names and paths, which run in-process.)"""
    return bool(ref) and len(ref) <= 128 and all(c.isalnum() or c in "-_." for c in ref)


def _filters_json(filters: Filters | None) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """Filters as the routes' JSON, and the collections they name; (None, ()) when the JSON
    cannot say them (document ids, a property named twice)."""
    if filters is None:
        return {}, ()
    keys = [k for k, _ in filters.fields]
    if filters.doc_ids is not None or len(set(keys)) != len(keys):
        return None, ()
    out = _present(
        path=list(filters.path_prefixes),
        tags=list(filters.tags),
        fields=dict(filters.fields) or None,
        after=filters.after,
        before=filters.before,
    )
    return out, filters.collections


def _query_body(
    mode: str,
    query: str,
    n: int | None,
    collections: tuple[str, ...],
    min_score: float,
    full: bool,
    filters: Filters | None,
    **options: Any,
) -> dict[str, Any] | None:
    """The body of `POST /v1/query`, or None when the route cannot express this call."""
    raw_filters, more = _filters_json(filters)
    if raw_filters is None or (n is not None and not 1 <= n <= 1000):
        return None
    if not 0.0 <= min_score <= 1.0 or options.get("candidateLimit", 30) not in range(1, 201):
        return None
    body: dict[str, Any] = {
        "q": query,
        "mode": mode,
        "collections": list(dict.fromkeys((*collections, *more))),
        "minScore": min_score,
        "full": full,
        **options,
    }
    if raw_filters:
        body["filters"] = raw_filters
    if n is None:
        body["all"] = True
    else:
        body["n"] = n
    return body


def _call(
    method: str,
    path: str,
    decode: Callable[[Any], T],
    body: Mapping[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> Callable[[DaemonClient], T]:
    """A call of one route whose reply `decode` turns into the facade's value."""
    return lambda d: decode(d.request(method, path, body, params))


def _post(body: dict[str, Any], decode: Callable[[Any], T]) -> Callable[[DaemonClient], T]:
    return _call("POST", "/v1/query", decode, body)


def _post_to(
    path: str, body: dict[str, Any], decode: Callable[[Any], T]
) -> Callable[[DaemonClient], T]:
    return _call("POST", path, decode, body)


def _results_of(body: dict[str, Any]) -> Callable[[DaemonClient], list[SearchResult]]:
    return _post(body, lambda data: [wire.search_result_from_json(r) for r in data["results"]])


def _fact_reply(
    method: str, path: str, body: Mapping[str, Any] | None
) -> Callable[[DaemonClient], Fact]:
    return _call(method, path, lambda data: wire.fact_from_json(data["fact"]), body)


def _document(data: Any) -> Document:
    return wire.document_from_json(data["document"])


def _recall_hits(data: Any) -> list[RecallHit]:
    return [wire.recall_hit_from_json(h) for h in data["results"]]


def _facts(data: Any) -> list[Fact]:
    return [wire.fact_from_json(f) for f in data["facts"]]


def _sync_report(data: Any) -> SyncReport:
    return wire.sync_report_from_json(data["report"])


def _absolute_if_local(ref: str) -> str:
    """A path that exists from here is sent absolute: the daemon's working folder differs."""
    head, sep, tail = ref.rpartition(":")
    path, suffix = (head, sep + tail) if sep and tail.isdigit() else (ref, "")
    if path.startswith(("#", "engram://")):
        return ref
    local = Path(path).expanduser()
    if not local.is_absolute() and local.is_file():
        return str(local.resolve()) + suffix
    return ref
