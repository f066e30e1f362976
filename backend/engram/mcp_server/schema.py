"""Tool definitions: an explicit JSON schema per tool, and argument checking that turns a bad
call into a message an agent can act on."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engram.errors import InvalidInputError
from engram.mcp_server.output import DEFAULT_MAX_CHARS

if TYPE_CHECKING:
    from engram.mcp_server.gateway import Gateway

Run = Callable[["Gateway", dict[str, Any]], Awaitable[str]]


@dataclass(frozen=True)
class Tool:
    """One MCP tool: what the agent sees (name, title, description, schema), the code, and
    the behaviour hints hosts use to decide what needs the user's confirmation.

    `read_only`: changes nothing. `destructive`: may overwrite, move or remove what exists
    (False: only adds). `idempotent`: repeating a successful call with the same arguments
    changes nothing more. The last two only mean something for a tool that writes."""

    name: str
    title: str
    description: str
    schema: Mapping[str, Any]
    run: Run
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = False


def obj(required: Sequence[str] = (), /, **props: dict[str, Any]) -> dict[str, Any]:
    """An object schema with these properties; unknown arguments are refused."""
    schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def text(description: str, max_len: int = 2000, min_len: int = 0, **extra: Any) -> dict[str, Any]:
    """A string argument."""
    out: dict[str, Any] = {"type": "string", "description": description, "maxLength": max_len}
    if min_len:
        out["minLength"] = min_len
    return {**out, **extra}


def integer(description: str, low: int, high: int, default: int | None = None) -> dict[str, Any]:
    """A whole-number argument within [low, high]."""
    out: dict[str, Any] = {
        "type": "integer",
        "description": description,
        "minimum": low,
        "maximum": high,
    }
    return out if default is None else {**out, "default": default}


def number(
    description: str, low: float, high: float, default: float | None = None
) -> dict[str, Any]:
    """A number argument within [low, high]."""
    out: dict[str, Any] = {"type": "number", "description": description, "minimum": low}
    out["maximum"] = high
    return out if default is None else {**out, "default": default}


def flag(description: str, default: bool = False) -> dict[str, Any]:
    """A boolean argument."""
    return {"type": "boolean", "description": description, "default": default}


def texts(description: str, max_items: int = 100, max_len: int = 1000) -> dict[str, Any]:
    """A list of non-empty strings."""
    return {
        "type": "array",
        "description": description,
        "items": {"type": "string", "minLength": 1, "maxLength": max_len},
        "maxItems": max_items,
    }


def choice(description: str, options: Sequence[str], default: str | None = None) -> dict[str, Any]:
    """One of a few strings."""
    out: dict[str, Any] = {"type": "string", "description": description, "enum": list(options)}
    return out if default is None else {**out, "default": default}


def max_chars(default: int = DEFAULT_MAX_CHARS) -> dict[str, Any]:
    """The output budget every tool with long output takes."""
    return integer(
        "Most characters to return (about 4 per token). Longer output is cut and says so, "
        "with what to ask for next.",
        1000,
        200_000,
        default,
    )


def check_arguments(tool: Tool, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments with defaults filled in, or InvalidInputError saying what is wrong and
    what the tool accepts."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    args = dict(arguments or {})
    error = best_match(Draft202012Validator(tool.schema).iter_errors(args))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        raise InvalidInputError(
            f"invalid arguments for {tool.name}: {where + ': ' if where else ''}"
            + _cut(error.message),
            hint=f"{tool.name} takes {signature(tool.schema)}",
        )
    for name, value in args.items():
        problem = _unusable(value)
        if problem:
            raise InvalidInputError(
                f"invalid arguments for {tool.name}: {name}: {problem}",
                hint=f"{tool.name} takes {signature(tool.schema)}",
            )
    props = tool.schema.get("properties", {})
    return {**{k: p.get("default") for k, p in props.items()}, **args}


def _cut(message: str, limit: int = 300) -> str:
    """A validator's message, which quotes the offending value, at a readable length."""
    return message if len(message) <= limit else message[:limit] + "... (cut)"


def _unusable(value: Any) -> str | None:
    """What no tool takes anywhere in `value`, though JSON Schema lets it through: NaN and
    Infinity (not JSON, but the SDK's parser reads them), NUL (no file name or SQLite text
    binding holds one; the HTTP API refuses it too)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN and Infinity are not numbers"
    if isinstance(value, str):
        return "text must not contain NUL characters" if "\x00" in value else None
    if isinstance(value, Mapping):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        return None
    return next((p for x in items if (p := _unusable(x))), None)


def signature(schema: Mapping[str, Any]) -> str:
    """`query (string, required), limit (integer 1..100) ...` for error hints."""
    required = set(schema.get("required", ()))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type", "value")
        if "enum" in prop:
            kind = "|".join(prop["enum"])
        elif "minimum" in prop and "maximum" in prop:
            kind = f"{kind} {prop['minimum']}..{prop['maximum']}"
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts) or "no arguments"
