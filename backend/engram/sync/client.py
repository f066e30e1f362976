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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engram.errors import UnavailableError

if TYPE_CHECKING:
    import aiohttp

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
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
    ) -> None:
        self.url = url.rstrip("/")
        self.sync_token = sync_token
        self.auth = auth  # "Convex <deploy key>" or "Bearer <jwt>", optional
        self.timeout = timeout
        self.backoff = backoff or Backoff()
        self.sleep = sleep
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

    async def query(self, path: str, args: dict[str, Any], retry: bool = True) -> Any:
        """Run a query function and return its value."""
        return await self._call("query", path, args, retry)

    async def mutation(self, path: str, args: dict[str, Any], retry: bool = True) -> Any:
        """Run a mutation function (carry an op id in `args` so a retry is safe)."""
        return await self._call("mutation", path, args, retry)

    async def _call(self, route: str, path: str, args: dict[str, Any], retry: bool) -> Any:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._once(route, path, args)
            except Retryable as exc:
                wait = self.backoff.delay(attempt, exc.retry_after)
                if not retry or attempt >= self.backoff.attempts or wait > self.backoff.longest:
                    raise
                self.retries += 1
                await self.sleep(wait)

    async def _once(self, route: str, path: str, args: dict[str, Any]) -> Any:
        import aiohttp

        if self._session is None:
            raise RuntimeError("use ConvexClient as an async context manager")
        body = {"path": path, "format": "json", "args": encode({**args, "token": self.sync_token})}
        headers = {"Content-Type": "application/json"}
        if self.auth:
            headers["Authorization"] = self.auth
        try:
            async with self._session.post(
                f"{self.url}/api/{route}", data=json.dumps(body), headers=headers
            ) as resp:
                text = await resp.text()
                status = resp.status
                retry_after = _seconds(resp.headers.get("Retry-After"))
        except TimeoutError:
            raise Retryable(f"Convex did not answer {path} in time") from None
        except aiohttp.ClientError as exc:
            raise Retryable(f"cannot reach Convex ({type(exc).__name__})") from None
        return _result(path, status, text, retry_after)


def _result(path: str, status: int, text: str, retry_after: float | None) -> Any:
    """The function's value from a reply, or the error it means."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("status") == "success":
        return data.get("value")
    if isinstance(data, dict) and data.get("status") == "error":
        raise _function_error(path, data)
    detail = data.get("message") if isinstance(data, dict) else None
    summary = f"HTTP {status}" + (f": {str(detail)[:200]}" if detail else "")
    if status in (401, 403):
        raise NotAuthorized(f"Convex refused the credentials for {path} ({summary})")
    if status in RETRY_STATUSES or status >= 500:
        raise Retryable(f"Convex answered {summary} to {path}", retry_after)
    raise Rejected(f"Convex refused {path} ({summary})")


def _function_error(path: str, data: dict[str, Any]) -> ConvexError:
    message = _REQUEST_ID.sub("", str(data.get("errorMessage") or "")).strip()
    info = data.get("errorData")
    code = info.get("code") if isinstance(info, dict) else None
    if code in ("unauthorized", "not_configured"):
        return NotAuthorized(f"{path}: {info.get('message') if info else message}")
    if code == "invalid_argument":
        field = info.get("field") if isinstance(info, dict) else None
        return Rejected(f"{path}: {info.get('message') if info else message}", field)
    if PAUSED in message:
        return Retryable(f"{path}: the Convex deployment is paused")
    if "Could not find public function" in message:
        return NotDeployed(f"{path} is not deployed on this Convex deployment")
    return Rejected(f"{path}: {message[:300]}")


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
