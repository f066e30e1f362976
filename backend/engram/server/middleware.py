"""Everything a request passes before a handler: Host and Origin checks, size caps, the bearer
token; and after: errors as JSON, CORS for Obsidian, an access log without secrets."""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from engram.errors import EngramError, storage_error
from engram.printable import printable
from engram.server.state import CONFIG, ENGRAM, RUNTIME

ALLOWED_ORIGIN = "app://obsidian.md"
CLIENT_CLOSED = 499
MAX_QUERY_STRING = 4096
PUBLIC = {("GET", "/v1/health")}
log = logging.getLogger("engram.server")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

STATUS_BY_CODE = {
    "not_found": 404,
    "invalid_input": 400,
    "invalid_json": 400,
    "request_timeout": 408,
    "conflict": 409,
    "not_writable": 403,  # a read-only file system, or no permission
    "unavailable": 503,
    "no_space": 507,  # the disk (or the index's) is full: Insufficient Storage
    "config": 500,
}
CODE_BY_STATUS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
}


class ApiError(EngramError):
    """An error with an explicit HTTP status."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def error_response(status: int, code: str, message: str, hint: str | None = None) -> web.Response:
    """The one error shape: {"error": {"code", "message"}}, plus "hint" when there is one."""
    error = {"code": code, "message": message}
    if hint:
        error["hint"] = hint
    return web.json_response({"error": error}, status=status)


def _from_http_exception(request: web.Request, exc: web.HTTPException) -> web.Response:
    status = exc.status
    if status == 404:
        message = f"no such route: {request.method} {request.path}"
    elif status == 405:
        allowed = sorted(getattr(exc, "allowed_methods", ()) or ())
        message = f"{request.method} is not allowed here" + (
            f"; use {', '.join(allowed)}" if allowed else ""
        )
    elif status == 413:
        message = f"request body too large (limit {request.app[CONFIG].max_body:,} bytes)"
    else:
        message = exc.reason
    resp = error_response(status, CODE_BY_STATUS.get(status, "http_error"), message)
    if status == 405 and "Allow" in exc.headers:
        resp.headers["Allow"] = exc.headers["Allow"]
    return resp


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn every failure into JSON with the right status, never a traceback; add CORS."""
    try:
        resp = await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        resp = _from_http_exception(request, exc)
    except ApiError as exc:
        resp = error_response(exc.status, exc.code, exc.message)
    except web.RequestPayloadError as exc:  # a body aiohttp could not decode (chunks, gzip)
        resp = error_response(400, "bad_request", f"the request body is malformed: {_why(exc)}")
    except EngramError as exc:
        resp = _engram_error(exc)
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if isinstance(exc, ConnectionResetError) and request.transport is None:
            # The client hung up (mid-body, or before the answer): nothing to answer and
            # nothing wrong here. Logged as 499, nginx's status for this.
            log.info("%s %s: the client closed the connection", request.method, request.path)
            return web.Response(status=CLIENT_CLOSED)
        found = storage_error(exc, _index_file(request))
        if found is not None:  # a full disk or a read-only folder: said in one line
            log.warning("%s %s: %s", request.method, request.path, found.message)
            return _cors(request, _engram_error(found))
        log.exception("error in %s %s", request.method, request.path)
        path = printable(request.path)
        request.app[RUNTIME].record_error(f"{type(exc).__name__} in {path}")
        resp = error_response(500, "internal", "internal error; the server log has details")
    return _cors(request, resp)


def _engram_error(exc: EngramError) -> web.Response:
    return error_response(STATUS_BY_CODE.get(exc.code, 400), exc.code, exc.message, exc.hint)


def _cors(request: web.Request, resp: web.StreamResponse) -> web.StreamResponse:
    if request.headers.get("Origin") == ALLOWED_ORIGIN:
        resp.headers["Access-Control-Allow-Origin"] = ALLOWED_ORIGIN
        resp.headers["Vary"] = "Origin"
    return resp


def _index_file(request: web.Request) -> str | None:
    """The daemon's index file (SQLite's errors do not name it)."""
    engram = request.app.get(ENGRAM)
    return str(engram.settings.db_path) if engram is not None else None


def _why(exc: BaseException) -> str:
    """What aiohttp's parser said, without its status prefix."""
    cause = exc.__cause__
    return str(getattr(cause, "message", None) or cause or "unreadable")


def _host_ok(request: web.Request) -> bool:
    transport = request.transport
    sock = transport.get_extra_info("sockname") if transport is not None else None
    if not sock:
        return False
    port = sock[1]
    return request.headers.get("Host", "").lower() in {f"127.0.0.1:{port}", f"localhost:{port}"}


def _token_ok(request: web.Request) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    given = given.strip()
    if scheme.lower() != "bearer" or not given or not given.isascii():
        return False  # tokens are ASCII; other bytes arrive undecodable, and are wrong anyway
    return hmac.compare_digest(given, request.app[RUNTIME].token)


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """DNS-rebinding and cross-site defences, size caps, then the bearer token."""
    if not _host_ok(request):
        raise ApiError(
            403, "forbidden_host", "the Host header must be 127.0.0.1:PORT or localhost:PORT"
        )
    origin = request.headers.get("Origin")
    if origin is not None and origin != ALLOWED_ORIGIN:
        raise ApiError(403, "forbidden_origin", "cross-origin requests are refused")
    if request.method == "OPTIONS" and origin == ALLOWED_ORIGIN:
        return web.Response(
            status=204,
            headers={
                "Access-Control-Allow-Methods": "GET, POST, PATCH, DELETE",
                "Access-Control-Allow-Headers": "Authorization, Content-Type",
                "Access-Control-Max-Age": "600",
            },
        )
    if len(request.query_string) > MAX_QUERY_STRING:
        raise ApiError(414, "uri_too_long", f"query string over {MAX_QUERY_STRING} characters")
    limit = request.app[CONFIG].max_body
    if request.content_length is not None and request.content_length > limit:
        raise ApiError(413, "payload_too_large", f"request body too large (limit {limit:,} bytes)")
    if (request.method, request.path) not in PUBLIC and not _token_ok(request):
        exc = ApiError(401, "unauthorized", "missing or wrong bearer token")
        resp = error_response(exc.status, exc.code, exc.message)
        resp.headers["WWW-Authenticate"] = 'Bearer realm="engram"'
        return resp
    return await handler(request)


class AccessLogger(AbstractAccessLogger):
    """One line per request: method, path (no query string: it may hold note text), status,
    milliseconds. Headers are never logged, so the token is not either."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        """Write the line."""
        self.logger.info(
            "%s %s %s %.1fms", request.method, request.path, response.status, time * 1000
        )

    @property
    def enabled(self) -> bool:
        """Only when the logger would print INFO."""
        return self.logger.isEnabledFor(logging.INFO)


def middlewares() -> list[Any]:
    """Outermost first."""
    return [errors, guard]
