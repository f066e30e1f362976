"""Reading request input: a JSON object body and typed fields, with errors a client can fix."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from aiohttp import web

from engram.errors import InvalidInputError
from engram.server.state import CONFIG

MAX_QUERY_CHARS = 2000
MAX_LIST_ITEMS = 1000
# No route takes JSON nested more than a few levels (frontmatter values are the deepest);
# the cap keeps a hostile body from exhausting the recursion of whatever handles it.
MAX_DEPTH = 32
TOO_DEEP = f"the body is nested too deeply (limit {MAX_DEPTH} levels)"


class BadJSON(InvalidInputError):
    """The body is not a JSON object."""

    code = "invalid_json"


class SlowBody(InvalidInputError):
    """The client announced a body and stopped sending it."""

    code = "request_timeout"


async def json_body(request: web.Request, allow_empty: bool = False) -> dict[str, Any]:
    """The request body as a JSON object ({} for an empty body when allowed): strict JSON
    (no NaN, Infinity or overflowing number), at most MAX_DEPTH levels deep, all text usable."""
    try:
        async with asyncio.timeout(request.app[CONFIG].body_seconds):
            raw = await request.read()
    except TimeoutError:
        raise SlowBody(
            f"the body did not arrive within {request.app[CONFIG].body_seconds:g} seconds"
        ) from None
    if not raw and allow_empty:
        return {}
    if not raw.strip():
        raise BadJSON("a JSON object body is required")
    try:
        data = json.loads(raw, parse_constant=_not_json, parse_float=_finite)
    except RecursionError:
        raise BadJSON(TOO_DEEP) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadJSON(f"the body is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BadJSON("the body must be a JSON object")
    for key, value in data.items():
        clean(key, key)
        _check_tree(value, key)
    return data


def query(request: web.Request) -> dict[str, str]:
    """The query string's parameters (the first of repeated ones), each usable as text."""
    params = dict(request.query)
    for key, value in params.items():
        clean(key, key)
        clean(value, key)
    return params


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"the number {literal[:24]} is out of range")
    return value


def _check_tree(value: Any, key: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH (the body is level 1) and unusable text anywhere
    under the field `key`, without recursion."""
    stack = [(value, 2)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            clean(item, key)
            continue
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise BadJSON(TOO_DEEP)
        stack.extend((child, depth + 1) for child in children)


def text(
    data: dict[str, Any],
    key: str,
    *,
    required: bool = False,
    default: str | None = None,
    max_len: int = MAX_QUERY_CHARS,
) -> str | None:
    """A string field (trimmed length checked), or `default`."""
    if key not in data:
        if required:
            raise InvalidInputError(f"{key!r} is required")
        return default
    value = present(data, key)
    if not isinstance(value, str):
        raise InvalidInputError(f"{key!r} must be a string")
    if required and not value.strip():
        raise InvalidInputError(f"{key!r} must not be empty")
    if len(value) > max_len:
        raise InvalidInputError(f"{key!r} is too long ({len(value)} > {max_len} characters)")
    return clean(value, key)


def members(data: dict[str, Any], key: str) -> Any:
    """An optional object field, sent without null members either (leave them out)."""
    if key not in data:
        return None
    value = present(data, key)
    if isinstance(value, dict):
        for name, member in value.items():
            if member is None:
                raise InvalidInputError(f"'{key}.{name}' must not be null (leave it out instead)")
    return value


def present(data: dict[str, Any], key: str) -> Any:
    """The value of a field that was sent; null is not a value (leave the field out)."""
    value = data[key]
    if value is None:
        raise InvalidInputError(f"{key!r} must not be null (leave it out instead)")
    return value


def clean(value: str, key: str) -> str:
    """Refuse text no file system or SQLite binding takes: NUL, lone surrogates."""
    if "\x00" in value:
        raise InvalidInputError(f"{key!r} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{key!r} is not valid Unicode (lone surrogate)") from None
    return value


def integer(
    data: dict[str, Any], key: str, default: int, *, low: int = 0, high: int = 10_000
) -> int:
    """An integer field within [low, high]."""
    if key not in data:
        return default
    value = present(data, key)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)  # query-string parameters arrive as text
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInputError(f"{key!r} must be a whole number")
    if not low <= value <= high:
        raise InvalidInputError(f"{key!r} must be between {low} and {high}")
    return value


def number(data: dict[str, Any], key: str, default: float, *, low: float, high: float) -> float:
    """A number field within [low, high]."""
    if key not in data:
        return default
    value = present(data, key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidInputError(f"{key!r} must be a number")
    if not low <= value <= high:
        raise InvalidInputError(f"{key!r} must be between {low} and {high}")
    return float(value)


def flag(data: dict[str, Any], key: str, default: bool = False) -> bool:
    """A boolean field."""
    if key not in data:
        return default
    value = present(data, key)
    if not isinstance(value, bool):
        raise InvalidInputError(f"{key!r} must be true or false")
    return value


def strings(data: dict[str, Any], key: str, *, max_len: int = 1024) -> list[str]:
    """A list of non-empty strings (missing means empty)."""
    if key not in data:
        return []
    value = present(data, key)
    if (
        not isinstance(value, list)
        or len(value) > MAX_LIST_ITEMS
        or not all(isinstance(x, str) and x and len(x) <= max_len for x in value)
    ):
        raise InvalidInputError(
            f"{key!r} must be a list of at most {MAX_LIST_ITEMS} non-empty strings"
        )
    return [clean(x, key) for x in value]
