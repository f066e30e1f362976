"""Use the running daemon (`engram serve`) from the CLI: one warm process holds the models.

The daemon of an index announces itself in `<data dir>/<index>.server.json` (mode 0600, with
its port and token). A command uses it when that file names a live process serving the same
index with the same config file, and works in-process otherwise; `--no-daemon` forces
in-process. Results are the daemon's JSON turned back into the facade's values, so every
output format prints the same thing either way.

Only the standard library is imported here: the check costs one small file read.
"""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

import click

from engram.errors import (
    ConflictError,
    EngramError,
    InvalidInputError,
    NotFoundError,
    UnavailableError,
)

if TYPE_CHECKING:
    from engram.cli.main import State
    from engram.service import Document, SearchResult

F = TypeVar("F", bound=Callable[..., Any])
TIMEOUT_SECONDS = 300.0
ERRORS: dict[str, type[EngramError]] = {
    "not_found": NotFoundError,
    "invalid_input": InvalidInputError,
    "invalid_json": InvalidInputError,
    "conflict": ConflictError,
    "unavailable": UnavailableError,
}


class DaemonUnreachable(ConnectionError):
    """Nothing answered at the daemon's address (it stopped or crashed)."""


def daemon_option(func: F) -> F:
    """Add `--no-daemon` (work in-process even when `engram serve` is running)."""
    return click.option(
        "--no-daemon",
        is_flag=True,
        help="Work in-process even when `engram serve` is running for this index.",
    )(func)


class DaemonClient:
    """A tiny JSON client for the daemon's HTTP API on loopback."""

    def __init__(
        self, port: int, token: str, pid: int | None = None, collection: str | None = None
    ) -> None:
        self.port = port
        self.token = token
        self.pid = pid
        self.collection = collection  # the vault collection its memory routes act on

    @classmethod
    def from_file(cls, path: Path, config_file: Path | None = None) -> DaemonClient | None:
        """The client for a server file when its process is alive (and uses `config_file`)."""
        from engram.server import discovery

        data = discovery.read(path)
        if data is None or not discovery.pid_alive(data.get("pid")):
            return None
        if config_file is not None and data.get("config") != str(config_file):
            return None
        port, token = data.get("port"), data.get("token")
        if not isinstance(port, int) or not isinstance(token, str) or not token:
            return None
        collection = data.get("collection")
        return cls(
            port, token, data.get("pid"), collection if isinstance(collection, str) else None
        )

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
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT_SECONDS)
        try:
            conn.request(method, path, body=payload, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        except (ConnectionError, TimeoutError, OSError, http.client.HTTPException) as exc:
            raise DaemonUnreachable(str(exc)) from None
        finally:
            conn.close()
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            raise EngramError(
                f"the daemon sent a reply that is not JSON (HTTP {resp.status})"
            ) from None
        if resp.status >= 400:
            err = (data or {}).get("error") or {}
            cls = ERRORS.get(err.get("code", ""), EngramError)
            message = str(err.get("message") or f"HTTP {resp.status}")
            error = cls(message)
            if err.get("hint"):
                error.hint = str(err["hint"])
            raise error
        return data

    def search(
        self,
        query: str,
        n: int | None,
        collections: tuple[str, ...],
        min_score: float,
        full: bool,
        mode: str = "search",
        **options: Any,
    ) -> list[SearchResult]:
        """`POST /v1/query`: the same results as `Engram.search` (or vsearch)."""
        return [
            result_from_dict(r)
            for r in self.query(query, n, collections, min_score, full, mode, **options)["results"]
        ]

    def query(
        self,
        query: str,
        n: int | None,
        collections: tuple[str, ...],
        min_score: float,
        full: bool,
        mode: str = "query",
        **options: Any,
    ) -> dict[str, Any]:
        """`POST /v1/query` returning the whole reply (results, notices, stages)."""
        names = {"candidate_limit": "candidateLimit"}
        body: dict[str, Any] = {
            "q": query,
            "mode": mode,
            "collections": list(collections),
            "minScore": min_score,
            "full": full,
            **{names.get(k, k): val for k, val in options.items()},
        }
        if n is None:
            body["all"] = True
        else:
            body["n"] = n
        data: dict[str, Any] = self.request("POST", "/v1/query", body)
        return data

    def get(self, ref: str, from_line: int | None, max_lines: int | None) -> Document:
        """`GET /v1/documents`: what `Engram.get` returns."""
        params = {"ref": _absolute_if_local(ref), "from": from_line, "lines": max_lines}
        data = self.request("GET", "/v1/documents", params=params)
        return document_from_dict(data["document"])

    def status(self) -> dict[str, Any]:
        """`GET /v1/status`."""
        data: dict[str, Any] = self.request("GET", "/v1/status")
        return data

    def active_note(self) -> dict[str, Any] | None:
        """`GET /v1/active-note`: the note Obsidian last reported open, or None."""
        note: dict[str, Any] | None = self.request("GET", "/v1/active-note")["activeNote"]
        return note

    def recall(self, query: str, n: int, **options: Any) -> list[dict[str, Any]]:
        """`POST /v1/recall` on the daemon's vault (options: type, tags, since, until,
        includeNotes)."""
        body = {"q": query, "n": n, **{k: v for k, v in options.items() if v not in (None, [])}}
        results: list[dict[str, Any]] = self.request("POST", "/v1/recall", body)["results"]
        return results

    def add_fact(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`POST /v1/facts` on the daemon's vault; returns the stored fact."""
        body = {k: v for k, v in fields.items() if v not in (None, [])}
        fact: dict[str, Any] = self.request("POST", "/v1/facts", body)["fact"]
        return fact

    def memory_context(self, query: str | None, profile: str, budget: int) -> dict[str, Any]:
        """`POST /v1/memory/context` on the daemon's vault."""
        body: dict[str, Any] = {"profile": profile, "budget": budget}
        if query:
            body["q"] = query
        data: dict[str, Any] = self.request("POST", "/v1/memory/context", body)
        return data

    def deep_search(self, query: str, n: int) -> dict[str, Any]:
        """`POST /v1/memory/deep-search` on the daemon's vault."""
        data: dict[str, Any] = self.request("POST", "/v1/memory/deep-search", {"q": query, "n": n})
        return data


def daemon_for(state: State, no_daemon: bool) -> DaemonClient | None:
    """The daemon serving this invocation's index and config, unless `--no-daemon`."""
    if no_daemon:
        return None
    from engram import config
    from engram.server.discovery import server_file

    try:
        settings = config.resolve(os.environ, index=state.index, config_file=state.config_file)
    except EngramError:
        return None  # let the in-process path report the config problem
    return DaemonClient.from_file(
        server_file(settings.data_dir, settings.index_name), settings.config_file
    )


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


def result_from_dict(d: dict[str, Any]) -> SearchResult:
    """A SearchResult from its JSON shape (`SearchResult.to_dict`)."""
    from engram.service import Passage, SearchResult

    return SearchResult(
        docid=d["docid"],
        collection=d["collection"],
        path=d["path"],
        title=d["title"],
        score=float(d["score"]),
        snippet=d.get("snippet") or "",
        line=int(d.get("line") or 1),
        highlights=tuple((int(a), int(b)) for a, b in d.get("highlights") or ()),
        context=d.get("context"),
        fact_type=d.get("factType"),
        body=d.get("body"),
        passages=tuple(
            Passage(
                snippet=p["snippet"],
                line=int(p["line"]),
                end_line=int(p["endLine"]),
                score=float(p["score"]),
                highlights=tuple((int(a), int(b)) for a, b in p.get("highlights") or ()),
            )
            for p in d.get("passages") or ()
        ),
        explain=d.get("explain"),
    )


def document_from_dict(d: dict[str, Any]) -> Document:
    """A Document from its JSON shape (`Document.to_dict`)."""
    from engram.service import Document

    return Document(
        docid=d["docid"],
        collection=d["collection"],
        path=d["path"],
        title=d["title"],
        text=d["text"],
        from_line=int(d.get("fromLine") or 1),
        total_lines=int(d.get("totalLines") or 0),
        context=d.get("context"),
        note=d.get("note"),
        fs_path=d.get("file"),
    )


def run_search(
    state: State,
    no_daemon: bool,
    mode: str,
    text: str,
    n: int | None,
    collections: tuple[str, ...],
    min_score: float,
    full: bool,
    **options: Any,
) -> tuple[list[SearchResult], list[str], dict[str, str], list[str]]:
    """(results, notices, stages, expansions) of a search mode, through the running daemon
    when there is one (warm models), else in this process."""
    daemon = daemon_for(state, no_daemon)
    if daemon is not None:
        try:
            data = daemon.query(text, n, collections, min_score, full, mode, **options)
            return (
                [result_from_dict(r) for r in data["results"]],
                list(data["notices"]),
                dict(data.get("stages") or {}),
                list(data.get("expansions") or ()),
            )
        except DaemonUnreachable:
            pass  # it stopped since it wrote its file: answer in-process
    engram = state.engram
    if mode == "query":
        run = engram.query_run(
            text, n=n, collections=collections, min_score=min_score, full=full, **options
        )
        return run.results, list(run.notices), run.stages, list(run.expansions)
    search = engram.vsearch if mode == "vsearch" else engram.search
    return (
        search(text, n=n, collections=collections, min_score=min_score, full=full, **options),
        [],
        {},
        [],
    )
