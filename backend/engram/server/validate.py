"""Reading request input: a JSON object body and typed fields, with errors a client can fix."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from engram.errors import InvalidInputError

MAX_QUERY_CHARS = 2000
MAX_LIST_ITEMS = 1000


class BadJSON(InvalidInputError):
    """The body is not a JSON object."""

    code = "invalid_json"


async def json_body(request: web.Request, allow_empty: bool = False) -> dict[str, Any]:
    """The request body as a JSON object ({} for an empty body when allowed)."""
    raw = await request.read()
    if not raw.strip():
        if allow_empty:
            return {}
        raise BadJSON("a JSON object body is required")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise BadJSON("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadJSON("the body must be a JSON object")
    return data


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
