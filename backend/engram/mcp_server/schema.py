"""Tool definitions: a tool's arguments are a frozen dataclass, the operation's request type
(service/requests.py) or, for an operation without a route, a small one in `args.py`, plus
the tool's own extras (`maxChars`, `cursor`). So the input schema is what `engram.codec`
publishes for HTTP too, with the same names and bounds, and the arguments are checked by
`codec.decode`, with the same errors as the HTTP API."""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from engram import codec
from engram.errors import InvalidInputError

if TYPE_CHECKING:
    from engram.mcp_server.gateway import Gateway

A = TypeVar("A")
X = TypeVar("X")
# What a field means when its request type does not say (by wire name)
DOCS = {
    "q": "what to look for",
    "n": "how many results",
    "collections": "only these collections (default: all)",
    "filters": "structured filters, as the inline syntax (path:, tag:, after:, before:)",
    "text": "the text",
    "title": "the title (default: from the text or path)",
    "importance": "0..1; 0.8 and over is structural, kept longest",
    "confidence": "0..1 (default 1)",
    "tags": "tags",
    "scope": "a scope (default: default)",
    "contradicts": "ids of facts this one contradicts",
    "body": "the note's markdown text",
    "append": "text to add at the end (of the section under heading)",
    "section": "new text for the whole section under heading",
    "find": "text (or regex) to find",
    "replace": "what replaces find",
    "depth": "how many links away",
    "tier": "importance tier: structural 0.8+, potential 0.4+, contextual",
    "removeProperties": "properties to remove",
}


@dataclass(frozen=True)
class Tool(Generic[A, X]):
    """One MCP tool: what the agent sees (name, title, description, schema), the code, and
    the behaviour hints hosts use to decide what needs the user's confirmation.

    `args`: the request type whose fields the tool takes (its wire names and bounds);
    `extra`: the tool's own arguments (output budget, paging); `omit`: wire names of
    fields not offered (the server fills them in, or a lean profile leaves them at their
    defaults); `docs`: descriptions for
    fields whose type gives none. `read_only`: changes nothing. `destructive`: may
    overwrite, move or remove what exists (False: only adds). `idempotent`: repeating a
    successful call with the same arguments changes nothing more."""

    name: str
    title: str
    description: str
    args: type[A]
    extra: type[X]
    run: Callable[[Gateway, A, X], Awaitable[str]]
    omit: tuple[str, ...] = ()
    docs: Mapping[str, str] = field(default_factory=dict)
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = False

    @functools.cached_property
    def schema(self) -> dict[str, Any]:
        """The input schema: the fields of `args` (less `omit`) and of `extra`."""
        props: dict[str, Any] = {}
        required: list[str] = []
        kinds: tuple[type, type] = (self.args, self.extra)
        for cls in kinds:
            for f in codec.fields_of(cls):
                if f.wire in self.omit:
                    continue
                assert f.wire not in props, f"{self.name}: {f.wire} is given twice"
                props[f.wire] = _property(f, self.docs.get(f.wire))
                if f.required:
                    required.append(f.wire)
        out: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        out["additionalProperties"] = False
        return out

    def only(self, names: tuple[str, ...]) -> Tool[A, X]:
        """This tool offering only the arguments `names`; the others keep their defaults."""
        offered = set(self.schema["properties"])
        assert set(names) <= offered, f"{self.name} has no {sorted(set(names) - offered)}"
        return replace(self, omit=(*self.omit, *sorted(offered - set(names))))

    def decode(self, arguments: Mapping[str, Any] | None) -> tuple[A, X]:
        """The arguments as the request and the extras, or InvalidInputError saying what is
        wrong and what the tool takes."""
        given = dict(arguments or {})
        extra_type: type = self.extra
        extras = {f.wire for f in codec.fields_of(extra_type)}
        try:
            unknown = sorted(set(given) - set(self.schema["properties"]))
            if unknown:
                raise InvalidInputError(f"unknown argument {unknown[0]!r}")
            for name, value in given.items():
                problem = _unusable(value)
                if problem:
                    raise InvalidInputError(f"{name}: {problem}")
            request = codec.decode(self.args, {k: v for k, v in given.items() if k not in extras})
            extra = codec.decode(self.extra, {k: v for k, v in given.items() if k in extras})
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"invalid arguments for {self.name}: {exc.message}",
                hint=f"{self.name} takes {signature(self.schema)}",
            ) from None
        return request, extra


def _property(f: codec.Field, doc: str | None) -> dict[str, Any]:
    """A field's schema for an agent: a value that defaults to null is simply left out, so
    its null branch is not listed; a default worth knowing is."""
    prop = _tidy(codec.schema(f.hint, f.meta), f.required or f.default is not None)
    if doc:  # the tool's own words for it
        prop["description"] = doc
    elif not prop.get("description") and f.wire in DOCS:
        prop["description"] = DOCS[f.wire]
    if f.default not in (None, False, (), "") and not f.required:
        prop["default"] = codec.encode(f.default)
    return prop


def _tidy(prop: dict[str, Any], null_means_something: bool = False) -> dict[str, Any]:
    """A property as few characters say it: a value whose null is the same as leaving it out
    loses its null branch, and a description is said once, not again in each branch."""
    options = prop.get("anyOf")
    if options is not None:
        bare = [{k: v for k, v in o.items() if k != "description"} for o in options]
        kept = [_tidy(o) for o in bare if null_means_something or o != {"type": "null"}]
        rest = {k: v for k, v in prop.items() if k != "anyOf"}
        prop = {**kept[0], **rest} if len(kept) == 1 else {"anyOf": kept, **rest}
    if "properties" in prop:  # a nested object: its own fields, tidied the same way
        required = set(prop.get("required", ()))
        props = prop["properties"]
        prop = {**prop, "properties": {k: _tidy(v, k in required) for k, v in props.items()}}
    if isinstance(prop.get("items"), dict):
        prop = {**prop, "items": _tidy(prop["items"])}
    return prop


def _unusable(value: Any) -> str | None:
    """What no tool takes anywhere in `value`, though a schema lets it through: NaN and
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
    """`q (string, required), n (integer 1..200) ...` for error hints."""
    required = set(schema.get("required", ()))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        prop = next(iter(prop.get("anyOf", ())), prop)
        kind = prop.get("type", "value")
        if "enum" in prop:
            kind = "|".join(str(e) for e in prop["enum"])
        elif "minimum" in prop and "maximum" in prop:
            kind = f"{kind} {prop['minimum']}..{prop['maximum']}"
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts) or "no arguments"
