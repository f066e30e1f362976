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
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlencode

from engram import codec
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

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.service import Engram
    from engram.service.engram import Engram as Facade
    from engram.service.upkeep import Status
else:
    Facade = object

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
            path += "?" + urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
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


class DaemonEngram(Facade):
    """The facade over a live daemon; every name it does not define is the local Engram's.

    To the type checker it is an Engram (the faces are checked against that interface); at
    run time each declared operation is a method made from its declaration (below), and
    every other name is the local Engram's. A test holds the two together."""

    def __init__(
        self,
        find: Callable[[], DaemonClient | None],
        settings: Settings,
        open_local: Callable[[], Engram],
    ) -> None:
        self._settings = settings
        self._find = find
        self._open_local = open_local
        self._local: Engram | None = None

    @property
    def settings(self) -> Settings:
        """The configuration this process resolved (which vaults the daemon may serve)."""
        return self._settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self._settings = value

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

    # -- the declared operations (operations.py) ---------------------------------------------

    def _send(self, op: ops.Operation, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run a declared operation: sent to the daemon when its request survives the wire
        unchanged and the daemon acts on its vault, else in-process."""
        remote = self._remote(op, args, kwargs)
        return self._run(op.name, remote, lambda e: getattr(e, op.name)(*args, **kwargs))

    def _remote(
        self, op: ops.Operation, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Callable[[DaemonClient], Any] | None:
        assert op.request is not None and op.route is not None
        try:
            req = op.request(*args, **kwargs)
        except TypeError:
            return None  # a parameter only the facade takes
        if op.vault and not self._serves(getattr(req, op.vault)):
            return None
        if codec.lost(req, keep=op.vault) is not None:
            return None
        if op.name == "get":
            req = replace(req, ref=_absolute_if_local(req.ref))
        body = codec.encode(req)
        try:
            codec.decode(op.request, body)
        except InvalidInputError:
            return None  # within what the facade takes, beyond what the route does
        method, path = op.route.split(" ", 1)
        for name in re.findall(r"{(\w+)}", path):
            value = str(body.pop(name))
            if "/" in value:
                return None
            path = path.replace("{" + name + "}", quote(value, safe=""))
        params = None
        if method in ("GET", "DELETE"):
            params = {k: _query_value(x) for k, x in body.items() if x is not None}
            body = None
        hint = ops.result_type(op)

        def call(daemon: DaemonClient) -> Any:
            data = daemon.request(method, path, body, params)
            return codec.decode(hint, data[op.reply] if op.reply else data)

        return call


def _declared(op: ops.Operation) -> Callable[..., Any]:
    def method(self: DaemonEngram, *args: Any, **kwargs: Any) -> Any:
        return self._send(op, args, kwargs)

    method.__name__ = method.__qualname__ = op.name
    method.__doc__ = f"{(op.request.__doc__ or '').strip()} (Engram.{op.name})"
    return method


for _op in ops.OPERATIONS:
    if _op.request is not None:
        setattr(DaemonEngram, _op.name, _declared(_op))


def _query_value(value: Any) -> Any:
    return str(value).lower() if isinstance(value, bool) else value


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
