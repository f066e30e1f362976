"""A small async client for a Convex deployment's public HTTP API (docs/convex.md).

Why not the `convex` package: its client holds the GIL while it blocks, has no timeouts and
may replay a write under a new session. This one sends `/api/query` and `/api/mutation` with
explicit timeouts, classifies every failure, and retries what is safe to retry (every
mutation carries an op id, so a retry after a lost reply is harmless) with exponential
backoff, jitter and `Retry-After`. aiohttp is imported when a client opens, not with the
facade: most commands never talk HTTP, and it is a third of a short command's start-up.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engram.errors import UnavailableError
from engram.printable import printable

if TYPE_CHECKING:
    import aiohttp

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# Convex returns at most 16 MiB from a function; twice that leaves room for JSON's escapes
MAX_REPLY = 32 * 1024 * 1024
PAUSED = "deployment is paused"
_REQUEST_ID = re.compile(r"^\[Request ID: [^\]]*\]\s*(Server Error\s*)?")


class ConvexError(UnavailableError):
    """A Convex call failed; subclasses say whether to retry, park or stop."""


class Retryable(ConvexError):
    """Worth trying again later: offline, timeout, 408/429/5xx, a paused deployment."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Rejected(ConvexError):
    """Convex refused the request itself (invalid argument): retrying cannot help."""

    code = "invalid_input"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class Malformed(ConvexError):
    """The deployment answered with something no Convex deployment sends (a reply too large,
    of the wrong shape or type): the run stops, and retrying the same request cannot help."""


class NotAuthorized(ConvexError):
    """Wrong or missing sync token or deploy key, or the deployment lacks the token."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "check the token: engram sync init --url URL (docs/convex.md)")


class NotDeployed(ConvexError):
    """The deployment answers but Engram's functions are not there (or are older)."""

    def __init__(self, message: str) -> None:
        super().__init__(
            message, "deploy the functions in convex/ with `npx convex deploy` (docs/convex.md)"
        )


@dataclass(frozen=True)
class Backoff:
    """Retry policy: `attempts` tries in all, delays growing from `base` up to `cap`; a
    server's Retry-After is obeyed up to `longest` seconds (beyond that the run stops and
    the outbox waits for the next one)."""

    attempts: int = 5
    base: float = 0.5
    cap: float = 30.0
    longest: float = 120.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `attempt` (1-based): the server's Retry-After
        when it gave one, else exponential backoff with full jitter."""
        if retry_after is not None:
            return retry_after
        return random.uniform(0, min(self.cap, self.base * 2 ** (attempt - 1)))


class ConvexClient:
    """Calls Engram's Convex functions; every function gets the sync token as `token`."""

    def __init__(
        self,
        url: str,
        sync_token: str,
        auth: str | None = None,
        timeout: float = 15.0,
        backoff: Backoff | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        max_reply: int = MAX_REPLY,
    ) -> None:
        self.url = url.rstrip("/")
        self.sync_token = sync_token
        self.auth = auth  # "Convex <deploy key>" or "Bearer <jwt>", optional
        self.timeout = timeout
        self.backoff = backoff or Backoff()
        self.sleep = sleep
        self.max_reply = max_reply
        self.retries = 0  # how many retries this client made (for reports)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> ConvexClient:
        import aiohttp

        limits = aiohttp.ClientTimeout(total=self.timeout, connect=min(self.timeout, 5.0))
        self._session = aiohttp.ClientSession(timeout=limits)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def query(
        self, path: str, args: dict[str, Any], retry: bool = True, deadline: float | None = None
    ) -> Any:
        """Run a query function and return its value; `deadline` (time.monotonic) cuts its
        waits and retries short."""
        return await self._call("query", path, args, retry, deadline)

    async def mutation(self, path: str, args: dict[str, Any], retry: bool = True) -> Any:
        """Run a mutation function (carry an op id in `args` so a retry is safe)."""
        return await self._call("mutation", path, args, retry)

    async def _call(
        self,
        route: str,
        path: str,
        args: dict[str, Any],
        retry: bool,
        deadline: float | None = None,
    ) -> Any:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._once(route, path, args, deadline)
            except Retryable as exc:
                wait = self.backoff.delay(attempt, exc.retry_after)
                if not retry or attempt >= self.backoff.attempts or wait > self.backoff.longest:
                    raise
                if deadline is not None and time.monotonic() + wait >= deadline:
                    raise
                self.retries += 1
                await self.sleep(wait)

    async def _once(
        self, route: str, path: str, args: dict[str, Any], deadline: float | None = None
    ) -> Any:
        import aiohttp

        if self._session is None:
            raise RuntimeError("use ConvexClient as an async context manager")
        body = {"path": path, "format": "json", "args": encode({**args, "token": self.sync_token})}
        headers = {"Content-Type": "application/json"}
        if self.auth:
            headers["Authorization"] = self.auth
        extra: dict[str, Any] = {}
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Retryable(f"Convex did not answer {path} in time")
            if left < self.timeout:
                extra["timeout"] = aiohttp.ClientTimeout(total=left, connect=min(left, 5.0))
        try:
            async with self._session.post(
                f"{self.url}/api/{route}", data=json.dumps(body), headers=headers, **extra
            ) as resp:
                data = await _read(resp, path, self.max_reply)
                status = resp.status
                retry_after = _seconds(resp.headers.get("Retry-After"))
        except TimeoutError:
            raise Retryable(f"Convex did not answer {path} in time") from None
        except aiohttp.ClientError as exc:
            raise Retryable(f"cannot reach Convex ({type(exc).__name__})") from None
        return _result(path, status, data, retry_after)


async def _read(resp: aiohttp.ClientResponse, path: str, cap: int) -> bytes:
    """The reply's body, at most `cap` bytes: a larger one is refused without reading the
    rest (it would be held whole, then again as text and as objects)."""
    size = resp.content_length
    if size is None or size <= cap:
        data = bytearray()
        async for chunk in resp.content.iter_any():
            data += chunk
            if len(data) > cap:
                break
        else:
            return bytes(data)
    resp.close()  # drop the connection rather than drain the rest
    raise Malformed(f"Convex's reply to {path} is larger than {cap >> 20} MiB: not read")


def _result(path: str, status: int, body: bytes, retry_after: float | None) -> Any:
    """The function's value from a reply, or the error it means."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the stack
        data = None
    if isinstance(data, dict) and data.get("status") == "success":
        return data.get("value")
    if isinstance(data, dict) and data.get("status") == "error":
        raise _function_error(path, data)
    if 200 <= status < 300:
        raise Malformed(f"Convex answered {path} with HTTP {status} but no Convex reply")
    detail = data.get("message") if isinstance(data, dict) else None
    summary = f"HTTP {status}" + (f": {printable(str(detail)[:200])}" if detail else "")
    if status in (401, 403):
        raise NotAuthorized(f"Convex refused the credentials for {path} ({summary})")
    if status in RETRY_STATUSES or status >= 500:
        raise Retryable(f"Convex answered {summary} to {path}", retry_after)
    raise Rejected(f"Convex refused {path} ({summary})")


def _function_error(path: str, data: dict[str, Any]) -> ConvexError:
    message = _REQUEST_ID.sub("", str(data.get("errorMessage") or "")).strip()
    info = data.get("errorData")
    code = info.get("code") if isinstance(info, dict) else None
    said = str((info.get("message") if isinstance(info, dict) else None) or message)
    said = printable(said[:300])
    if code in ("unauthorized", "not_configured"):
        return NotAuthorized(f"{path}: {said}")
    if code == "invalid_argument":
        field = info.get("field") if isinstance(info, dict) else None
        return Rejected(f"{path}: {said}", field if isinstance(field, str) else None)
    if PAUSED in message:
        return Retryable(f"{path}: the Convex deployment is paused")
    if "Could not find public function" in message:
        return NotDeployed(f"{path} is not deployed on this Convex deployment")
    return Rejected(f"{path}: {printable(message[:300])}")


def encode(value: Any) -> Any:
    """Convex-encoded JSON for our arguments: every number as a float (Convex's JSON
    numbers are float64; an int would read as one anyway, but say so explicitly)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    raise TypeError(f"cannot send {type(value).__name__} to Convex")


def _seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare from Convex; fall back to our own backoff
