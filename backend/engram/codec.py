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

import contextlib
import dataclasses
import datetime as dt
import functools
import math
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from engram.errors import InvalidInputError

MISSING: Any = dataclasses.MISSING
# A score: sent rounded to 4 decimals, what a reader needs and stable between two runs.
Score = Annotated[float, {"digits": 4}]
Seconds = Annotated[float, {"digits": 3}]  # a duration, sent to the millisecond
TOP = ""  # where a top-level object's fields are named plainly ('n', not 'value.n')


def arg(
    default: Any = MISSING,
    *,
    doc: str = "",
    wire: str | None = None,
    low: float | None = None,
    high: float | None = None,
    max_len: int | None = None,
    min_len: int | None = None,
    max_items: int | None = None,
    date: bool = False,
    choices: tuple[str, ...] | None = None,
    local: bool = False,
    note: bool = False,
    factory: Any = MISSING,
) -> Any:
    """A dataclass field with its description, wire name and bounds (checked by `decode`).

    `min_len`: the least characters a string has besides blank space. `date`: a string that
    is an ISO 8601 date. `choices`: the values a string (or each string of a list) may take.
    `local`: a parameter of the operation that only an in-process call can give (never on
    the wire). `note`: a note of the vault, by path or name; the daemon refuses one leaving
    the vault before the operation runs."""
    meta = {
        k: v
        for k, v in {
            "doc": doc,
            "wire": wire,
            "low": low,
            "high": high,
            "max_len": max_len,
            "min_len": min_len,
            "max_items": max_items,
            "date": date or None,
            "choices": choices,
            "local": local or None,
            "note": note or None,
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
    """The wire fields of a dataclass with their resolved type hints (cached per class); a
    hint `Annotated[T, {...}]` adds its mapping to the field's bounds (see `Score`)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        if not f.init or f.metadata.get("local"):
            continue
        factory: Any = f.default_factory
        default = f.default if factory is MISSING else factory()
        required = f.default is MISSING and factory is MISSING
        wire = f.metadata.get("wire") or camel(f.name)
        hint, meta = hints[f.name], dict(f.metadata)
        if typing.get_origin(hint) is Annotated:
            hint, *extras = typing.get_args(hint)
            for extra in extras:
                meta.update(extra)
        out.append(Field(f.name, wire, hint, meta, required, default))
    return tuple(out)


def encode(value: Any) -> Any:
    """A value as JSON data."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.wire: _field(f, getattr(value, f.name)) for f in fields_of(type(value))}
        for wire, prop in getattr(type(value), "WIRE_EXTRA", {}).items():
            out[wire] = encode(getattr(value, prop))
        return out
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
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


def lost(value: Any, keep: str | None = None) -> str | None:
    """The first local field of a value (or of a value inside it) set to other than its
    default: what the wire would drop. `keep` names a local field the caller handles."""
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        if f.metadata.get("local") and f.name != keep:
            factory: Any = f.default_factory
            default = f.default if factory is MISSING else factory()
            if item != default:
                return f.name
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            inner = lost(item)
            if inner is not None:
                return f"{f.name}.{inner}"
    return None


def _field(f: Field, value: Any) -> Any:
    digits = f.meta.get("digits")
    if digits is not None and isinstance(value, float):
        return round(value, digits)
    return encode(value)


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
    """The bounds of a list field that apply to each item (length, choices of each string)."""
    return {k: meta[k] for k in ("max_len", "min_len", "choices", "date") if k in meta}


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
    for each in dataclasses.fields(cls):  # a required local parameter: its caller gives it
        if each.metadata.get("local") and MISSING is each.default is each.default_factory:
            values[each.name] = None
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
        if isinstance(data, bool) or not isinstance(data, int | float) or not math.isfinite(data):
            raise InvalidInputError(f"{where} must be a number")
        return _bounded(float(data), where, meta)
    if hint in (str, Path):
        if not isinstance(data, str):
            raise InvalidInputError(f"{where} must be a string")
        if "\x00" in data:
            raise InvalidInputError(f"{where} must not contain NUL characters")
        if meta.get("max_len") is not None and len(data) > meta["max_len"]:
            raise InvalidInputError(f"{where} is too long (at most {meta['max_len']:,} characters)")
        _text(data, where, meta)
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


def _text(data: str, where: str, meta: Mapping[str, Any]) -> None:
    if meta.get("min_len") and len(data.strip()) < meta["min_len"]:
        raise InvalidInputError(f"{where} must not be empty")
    if meta.get("choices") and data not in meta["choices"]:
        raise InvalidInputError(f"{where} must be one of {', '.join(meta['choices'])}")
    if meta.get("date"):
        try:
            dt.date.fromisoformat(data)
        except ValueError:
            raise InvalidInputError(f"{where} must be an ISO 8601 date, got {data!r}") from None


def _bounded(number: Any, where: str, meta: Mapping[str, Any]) -> Any:
    low, high = meta.get("low"), meta.get("high")
    if (low is not None and number < low) or (high is not None and number > high):
        span = f"from {low} to {high}" if low is not None and high is not None else ""
        span = span or (f"at least {low}" if low is not None else f"at most {high}")
        raise InvalidInputError(f"{where} must be {span}, got {number}")
    return number


def schema(
    hint: Any,
    meta: Mapping[str, Any] | None = None,
    refs: dict[str, Any] | None = None,
    encoded: bool = False,
) -> dict[str, Any]:
    """The JSON Schema (OpenAPI 3.1's dialect) of a type, with the bounds `decode` checks.
    With `refs`, each dataclass is put there under its name and referred to (OpenAPI's
    components), else written in place. `encoded`: the schema of what `encode` writes."""
    meta = meta or {}
    origin = typing.get_origin(hint)
    out: dict[str, Any]
    if hint is Any:
        out = {}
    elif origin in (Union, types.UnionType):
        options = [schema(o, meta, refs, encoded) for o in typing.get_args(hint)]
        out = options[0] if len(options) == 1 else {"anyOf": options}
    elif origin is Literal:
        out = {"enum": list(typing.get_args(hint))}
    elif origin in (tuple, list, Sequence, Iterable, typing.Iterable, typing.Sequence):
        args = typing.get_args(hint)
        if origin is tuple and args and args[-1] is not Ellipsis:
            items = [schema(a, None, refs, encoded) for a in args]
            out = {"type": "array", "prefixItems": items, "minItems": len(items)}
            out["maxItems"] = len(items)
        else:
            item = args[0] if args else Any
            out = {"type": "array", "items": schema(item, _item_meta(meta), refs, encoded)}
            if meta.get("max_items") is not None:
                out["maxItems"] = meta["max_items"]
    elif origin in (dict, Mapping, typing.Mapping):
        _, value_hint = typing.get_args(hint) or (str, Any)
        out = {"type": "object", "additionalProperties": schema(value_hint, None, refs, encoded)}
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint) and refs is not None:
        if hint.__name__ not in refs:
            refs[hint.__name__] = {}  # a type that holds itself refers to its own entry
            refs[hint.__name__] = object_schema(hint, refs, encoded)
        out = {"$ref": f"#/components/schemas/{hint.__name__}"}
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
        out = object_schema(hint)
    else:
        out = _scalar_schema(hint, meta)
    if meta.get("doc"):
        out = {**out, "description": meta["doc"]}
    return out


def object_schema(
    cls: type, refs: dict[str, Any] | None = None, encoded: bool = False
) -> dict[str, Any]:
    """A dataclass as a JSON Schema object: its fields, which are required, no others.
    `encoded`: as `encode` writes it (every field and derived value always there)."""
    props = {f.wire: schema(f.hint, f.meta, refs, encoded) for f in fields_of(cls)}
    for wire, prop in getattr(cls, "WIRE_EXTRA", {}).items():
        hint = typing.get_type_hints(getattr(cls, prop).fget)["return"]
        props[wire] = {**schema(hint, None, refs, encoded), "readOnly": True}
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    required = list(props) if encoded else [f.wire for f in fields_of(cls) if f.required]
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
    if hint is type(None):  # bounds belong to the value, not to null
        return {"type": "null"}
    out = dict(kinds[hint])
    if meta.get("low") is not None:
        out["minimum"] = meta["low"]
    if meta.get("high") is not None:
        out["maximum"] = meta["high"]
    if meta.get("max_len") is not None and hint is str:
        out["maxLength"] = meta["max_len"]
    if meta.get("min_len") and hint is str:
        out["minLength"] = meta["min_len"]
    if meta.get("choices") and hint is str:
        out["enum"] = list(meta["choices"])
    if meta.get("date") and hint is str:
        out["format"] = "date"
    return out


def is_list(hint: Any) -> bool:
    """Is a type a list (or an optional one)?"""
    kinds = (
        [hint, *typing.get_args(hint)]
        if typing.get_origin(hint) in (Union, types.UnionType)
        else [hint]
    )
    return any(typing.get_origin(k) in (list, tuple) for k in kinds)


def from_query(cls: type, params: Mapping[str, Any]) -> Any:
    """A request from a query string (every value text, a list given as its repeated
    parameter): numbers and flags read per field."""
    data: dict[str, Any] = dict(params)
    for f in fields_of(cls):
        value = data.get(f.wire)
        if value is None or isinstance(value, list):
            continue
        kinds = set(typing.get_args(f.hint)) or {f.hint}
        if bool in kinds:
            data[f.wire] = {"true": True, "1": True, "false": False, "0": False}.get(value, value)
        elif int in kinds:
            data[f.wire] = int(value) if value.lstrip("-").isdigit() else value
        elif float in kinds:
            with contextlib.suppress(ValueError):  # decode names the field
                data[f.wire] = float(value)
    return decode(cls, data)
