"""One codec for every value that crosses a process: requests and results as JSON, both ways.

Values are frozen dataclasses; the codec reads their fields and type hints, so no type has an
encoder or decoder of its own. On the wire a field is its name in camelCase unless its
`arg(..., wire=NAME)` says otherwise; `arg` also carries a request field's description and
bounds, which `decode` enforces and `schema` publishes (OpenAPI, MCP input schemas), so a
limit is written once. A class may add read-only values to its JSON with `WIRE_EXTRA`
(name -> property); decoding ignores them, since they are derived from the fields.

Decoding checks every value against its type and bounds and fails with InvalidInputError
naming the field (`fact.tags[2]`), so a request's validation and a reply's are the same code.
Standard library only: the daemon-backed CLI imports it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Union

from engram.errors import InvalidInputError

MISSING: Any = dataclasses.MISSING
TOP = ""  # where a top-level object's fields are named plainly ('n', not 'value.n')


def arg(
    default: Any = MISSING,
    *,
    doc: str = "",
    wire: str | None = None,
    low: float | None = None,
    high: float | None = None,
    max_len: int | None = None,
    max_items: int | None = None,
    factory: Any = MISSING,
) -> Any:
    """A dataclass field with its description, wire name and bounds (checked by `decode`)."""
    meta = {
        k: v
        for k, v in {
            "doc": doc,
            "wire": wire,
            "low": low,
            "high": high,
            "max_len": max_len,
            "max_items": max_items,
        }.items()
        if v not in (None, "")
    }
    if factory is not MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def camel(name: str) -> str:
    """snake_case -> camelCase."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclasses.dataclass(frozen=True)
class Field:
    """What the codec knows of one dataclass field."""

    name: str
    wire: str
    hint: Any
    meta: Mapping[str, Any]
    required: bool
    default: Any


@functools.cache
def fields_of(cls: type) -> tuple[Field, ...]:
    """The fields of a dataclass with their resolved type hints (cached per class)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        factory: Any = f.default_factory
        default = f.default if factory is MISSING else factory()
        required = f.default is MISSING and factory is MISSING
        wire = f.metadata.get("wire") or camel(f.name)
        out.append(Field(f.name, wire, hints[f.name], f.metadata, required, default))
    return tuple(out)


def encode(value: Any) -> Any:
    """A value as JSON data."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.wire: encode(getattr(value, f.name)) for f in fields_of(type(value))}
        for wire, prop in getattr(type(value), "WIRE_EXTRA", {}).items():
            out[wire] = encode(getattr(value, prop))
        return out
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, Iterable):
        return [encode(v) for v in value]
    raise TypeError(f"cannot encode a {type(value).__name__}")


def decode(hint: Any, data: Any, where: str = "") -> Any:
    """JSON data as a value of type `hint`, checked; InvalidInputError names the bad field."""
    return _decode(hint, data, where, {})


def _decode(hint: Any, data: Any, where: str, meta: Mapping[str, Any]) -> Any:
    origin = typing.get_origin(hint)
    if hint is Any:
        return data
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if data is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode(option, data, where, meta)
            except InvalidInputError as exc:
                errors.append(str(exc))
        raise InvalidInputError(errors[0] if len(errors) == 1 else f"{where}: not a valid value")
    if origin is Literal:
        if data not in typing.get_args(hint):
            choices = ", ".join(str(c) for c in typing.get_args(hint))
            raise InvalidInputError(f"{where} must be one of {choices}")
        return data
    if origin in (tuple, list, Sequence, Iterable, typing.Iterable, typing.Sequence):
        return _sequence(hint, origin, data, where, meta)
    if origin in (dict, Mapping, typing.Mapping):
        if not isinstance(data, dict):
            raise InvalidInputError(f"{where} must be an object")
        _, value_hint = typing.get_args(hint) or (str, Any)
        return {str(k): _decode(value_hint, v, f"{where}.{k}", {}) for k, v in data.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint, data, where)
    return _scalar(hint, data, where, meta)


def _sequence(hint: Any, origin: Any, data: Any, where: str, meta: Mapping[str, Any]) -> Any:
    if not isinstance(data, list):
        raise InvalidInputError(f"{where} must be a list")
    if meta.get("max_items") is not None and len(data) > meta["max_items"]:
        raise InvalidInputError(f"{where} takes at most {meta['max_items']} items")
    args = typing.get_args(hint)
    if origin is tuple and args and args[-1] is not Ellipsis:  # a fixed-size tuple
        if len(data) != len(args):
            raise InvalidInputError(f"{where} must have {len(args)} items")
        pairs = enumerate(zip(args, data, strict=True))
        return tuple(_decode(a, d, f"{where}[{i}]", {}) for i, (a, d) in pairs)
    item = args[0] if args else Any
    items = [_decode(item, d, f"{where}[{i}]", _item_meta(meta)) for i, d in enumerate(data)]
    return items if origin is list else tuple(items)


def _item_meta(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """The bounds of a list field that apply to each item (length of each string)."""
    return {"max_len": meta["max_len"]} if "max_len" in meta else {}


def _dataclass(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise InvalidInputError(f"{where or 'the body'} must be an object")
    known = fields_of(cls)
    extra = set(getattr(cls, "WIRE_EXTRA", {}))
    unknown = sorted(set(data) - {f.wire for f in known} - extra)
    if unknown:
        allowed = ", ".join(f.wire for f in known)
        raise InvalidInputError(
            f"{where + ': ' if where else ''}unknown field {unknown[0]!r}; allowed: {allowed}"
        )
    values = {}
    for f in known:
        name = f.wire if where == TOP else f"{where}.{f.wire}"
        if f.wire in data:
            values[f.name] = _decode(f.hint, data[f.wire], name, f.meta)
        elif f.required:
            raise InvalidInputError(f"{name!r} is required")
    return cls(**values)


def _scalar(hint: Any, data: Any, where: str, meta: Mapping[str, Any]) -> Any:
    if hint is bool:
        if not isinstance(data, bool):
            raise InvalidInputError(f"{where} must be true or false")
        return data
    if hint is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise InvalidInputError(f"{where} must be a whole number")
        return _bounded(data, where, meta)
    if hint is float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise InvalidInputError(f"{where} must be a number")
        return _bounded(float(data), where, meta)
    if hint in (str, Path):
        if not isinstance(data, str):
            raise InvalidInputError(f"{where} must be a string")
        if "\x00" in data:
            raise InvalidInputError(f"{where} must not contain NUL characters")
        if meta.get("max_len") is not None and len(data) > meta["max_len"]:
            raise InvalidInputError(f"{where} is longer than {meta['max_len']:,} characters")
        return Path(data) if hint is Path else data
    if hint in (dt.datetime, dt.date):
        if not isinstance(data, str):
            raise InvalidInputError(f"{where} must be an ISO 8601 date")
        try:
            parsed = hint.fromisoformat(data.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInputError(f"{where} must be an ISO 8601 date, got {data!r}") from None
        return parsed
    if hint is type(None):
        if data is not None:
            raise InvalidInputError(f"{where} must be null")
        return None
    raise TypeError(f"the codec cannot decode {hint!r} ({where})")


def _bounded(number: Any, where: str, meta: Mapping[str, Any]) -> Any:
    low, high = meta.get("low"), meta.get("high")
    if (low is not None and number < low) or (high is not None and number > high):
        span = f"from {low} to {high}" if low is not None and high is not None else ""
        span = span or (f"at least {low}" if low is not None else f"at most {high}")
        raise InvalidInputError(f"{where} must be {span}, got {number}")
    return number


def schema(hint: Any, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema (OpenAPI 3.1's dialect) of a type, with the bounds `decode` checks."""
    meta = meta or {}
    origin = typing.get_origin(hint)
    out: dict[str, Any]
    if hint is Any:
        out = {}
    elif origin in (Union, types.UnionType):
        options = [schema(o, meta) for o in typing.get_args(hint)]
        out = options[0] if len(options) == 1 else {"anyOf": options}
    elif origin is Literal:
        out = {"enum": list(typing.get_args(hint))}
    elif origin in (tuple, list, Sequence, Iterable, typing.Iterable, typing.Sequence):
        args = typing.get_args(hint)
        if origin is tuple and args and args[-1] is not Ellipsis:
            items = [schema(a) for a in args]
            out = {"type": "array", "prefixItems": items, "minItems": len(items)}
            out["maxItems"] = len(items)
        else:
            out = {"type": "array", "items": schema(args[0] if args else Any, _item_meta(meta))}
            if meta.get("max_items") is not None:
                out["maxItems"] = meta["max_items"]
    elif origin in (dict, Mapping, typing.Mapping):
        _, value_hint = typing.get_args(hint) or (str, Any)
        out = {"type": "object", "additionalProperties": schema(value_hint)}
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
        out = object_schema(hint)
    else:
        out = _scalar_schema(hint, meta)
    if meta.get("doc"):
        out = {**out, "description": meta["doc"]}
    return out


def object_schema(cls: type) -> dict[str, Any]:
    """A dataclass as a JSON Schema object: its fields, which are required, no others."""
    props = {f.wire: schema(f.hint, f.meta) for f in fields_of(cls)}
    for wire in getattr(cls, "WIRE_EXTRA", {}):
        props[wire] = {"readOnly": True}
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    required = [f.wire for f in fields_of(cls) if f.required]
    if required:
        out["required"] = required
    if cls.__doc__:
        out["description"] = cls.__doc__.strip().split("\n\n")[0]
    return out


def _scalar_schema(hint: Any, meta: Mapping[str, Any]) -> dict[str, Any]:
    kinds: dict[Any, dict[str, Any]] = {
        bool: {"type": "boolean"},
        int: {"type": "integer"},
        float: {"type": "number"},
        str: {"type": "string"},
        Path: {"type": "string"},
        dt.datetime: {"type": "string", "format": "date-time"},
        dt.date: {"type": "string", "format": "date"},
        type(None): {"type": "null"},
    }
    if hint not in kinds:
        raise TypeError(f"no schema for {hint!r}")
    out = dict(kinds[hint])
    if meta.get("low") is not None:
        out["minimum"] = meta["low"]
    if meta.get("high") is not None:
        out["maximum"] = meta["high"]
    if meta.get("max_len") is not None and hint is str:
        out["maxLength"] = meta["max_len"]
    return out
