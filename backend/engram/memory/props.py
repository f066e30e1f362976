"""Frontmatter properties: Dataview-friendly YAML, and edits that leave other keys alone.

A system write changes only the keys it means to change: each top-level key's lines are
located in the YAML text and replaced (or appended) one by one, so a person's other
properties keep their bytes, comments and order. The result is parsed back and compared
with what was intended; if the YAML is too unusual for that (duplicate keys, complex keys),
the whole block is re-serialised with python-frontmatter instead, values and order kept.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from engram.errors import InvalidInputError
from engram.vault import yamlload
from engram.vault.parse import split_frontmatter

DELETE = object()  # a change value that removes the key
_HANDLER = YAMLHandler()
_KEY_LINE = re.compile(
    r"""^(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"?:\-\[\]{}][^:]*?)\s*:(?:[ \t]|$)"""
)


class FactDumper(yaml.SafeDumper):
    """YAML the way Obsidian and Dataview read it: ISO 8601 dates, empty for null."""

    def ignore_aliases(self, data: Any) -> bool:
        """Never write anchors (`&id001`): Obsidian's property editor does not read them."""
        return True


def _datetime(dumper: yaml.SafeDumper, value: dt.datetime) -> yaml.Node:
    if value.tzinfo is not None:
        text = value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    else:
        text = value.strftime("%Y-%m-%dT%H:%M:%S")
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", text)


def _date(dumper: yaml.SafeDumper, value: dt.date) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", value.isoformat())


def _none(dumper: yaml.SafeDumper, _value: None) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:null", "")


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = '"' if value.startswith("[[") else None  # links quoted the way Obsidian does
    if "\n" in value:
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


FactDumper.add_representer(dt.datetime, _datetime)
FactDumper.add_representer(dt.date, _date)
FactDumper.add_representer(type(None), _none)
FactDumper.add_representer(str, _str)


def dump(props: Mapping[str, Any]) -> str:
    """YAML text (no delimiters, no final newline) for a mapping, keys in their order."""
    if not props:
        return ""
    return _HANDLER.export(
        dict(props), Dumper=FactDumper, sort_keys=False, width=1_000_000, indent=2
    )


def load(fm_text: str) -> dict[str, Any] | None:
    """Parsed frontmatter (native YAML types), or None when it is not a valid mapping."""
    try:
        data = yamlload.load(fm_text)  # bounded: an alias bomb must not hang a property edit
    except Exception:  # yaml raises a zoo of errors on hostile input (and YamlLimitError)
        return None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        return None
    return data


def read(text: str) -> tuple[dict[str, Any] | None, str]:
    """(properties or None when the frontmatter is broken, body) of a note's text."""
    fm, body, _ = split_frontmatter(text)
    if fm is None:
        return {}, text
    return load(fm), body


def _roundtrip(key: str, value: Any) -> Any:
    loaded = load(dump({key: value}))
    return None if loaded is None else loaded.get(key)


def differing(current: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of `desired` whose value the note does not already have."""
    return {k: v for k, v in desired.items() if k not in current or _roundtrip(k, v) != current[k]}


def _spans(lines: list[str]) -> dict[str, tuple[int, int]] | None:
    """Line ranges [start, end) of each top-level key; None when the layout is unusual."""
    starts: list[tuple[str, int]] = []
    ends: list[int] = []
    for i, line in enumerate(lines):
        if line[:1] == "#":
            ends.append(i)
            continue
        m = _KEY_LINE.match(line)
        if m is None:
            continue
        raw = m.group(0).rstrip().rstrip(":").rstrip()
        key = raw
        if raw[:1] in "\"'":
            parsed = load(f"{raw}: 0")
            if not parsed:
                return None
            key = next(iter(parsed))
        starts.append((key, i))
    out: dict[str, tuple[int, int]] = {}
    for n, (key, start) in enumerate(starts):
        stop = starts[n + 1][1] if n + 1 < len(starts) else len(lines)
        stop = min([e for e in ends if e > start] + [stop])
        while stop > start + 1 and not lines[stop - 1].strip():
            stop -= 1  # trailing blank lines stay between keys
        if key in out:
            return None
        out[key] = (start, stop)
    return out


def _newline(text: str) -> str:
    head = text[:2000]
    return "\r\n" if "\r\n" in head else "\n"


def edit(text: str, changes: Mapping[str, Any]) -> str:
    """`text` with its frontmatter keys set (or removed with DELETE); the body is untouched.

    Raises InvalidInputError when the existing frontmatter is not valid YAML: a broken
    block is the person's to fix, never ours to overwrite.
    """
    nl = _newline(text)
    fm, body, _ = split_frontmatter(text)
    if fm is None:
        added = {k: v for k, v in changes.items() if v is not DELETE}
        if not added:
            return text
        return "---" + nl + dump(added).replace("\n", nl) + nl + "---" + nl + text
    old = load(fm)
    if old is None:
        raise InvalidInputError("the note's frontmatter is not valid YAML; fix it first")
    open_end = text.index("\n") + 1
    head, tail = text[:open_end], text[open_end + len(fm) : len(text) - len(body)]
    expected = dict(old)
    for key, value in changes.items():
        if value is DELETE:
            expected.pop(key, None)
        else:
            expected[key] = _roundtrip(key, value)
    new_fm = _surgical(fm, old, changes, nl)
    if new_fm is None or load(new_fm) != expected:
        merged = {k: v for k, v in old.items() if changes.get(k, v) is not DELETE}
        merged.update({k: v for k, v in changes.items() if v is not DELETE})
        new_fm = dump(merged).replace("\n", nl) + (nl if merged else "")
    return head + new_fm + tail + body


def _surgical(fm: str, old: dict[str, Any], changes: Mapping[str, Any], nl: str) -> str | None:
    lines = fm.splitlines(keepends=True)
    spans = _spans(lines)
    if spans is None or set(spans) != set(old):
        return None
    replace: dict[int, tuple[int, str]] = {}
    appended: list[str] = []
    for key, value in changes.items():
        block = "" if value is DELETE else dump({key: value}).replace("\n", nl) + nl
        if key in spans:
            start, stop = spans[key]
            replace[start] = (stop, block)
        elif value is not DELETE:
            appended.append(block)
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i in replace:
            stop, block = replace[i]
            out.append(block)
            i = stop
        else:
            out.append(lines[i])
            i += 1
    out = [chunk for chunk in out if chunk]
    if out and not out[-1].endswith(("\n", "\r")):
        out[-1] += nl
    return "".join(out + appended)
