"""YAML frontmatter loaded with limits on size, nesting and alias expansion.

A note's frontmatter is hostile input: 600 bytes of nested aliases (`b: [*a, *a, ...]`, 16
levels) expand to 9^16 values, and a few hundred kilobytes of `[[[[...` crash libyaml's
composer (C recursion). So the YAML events are read first, in one streaming pass that counts
nesting depth and the size the document would have once every alias is expanded; only a
document within the limits is composed and constructed (by PyYAML, safe tags only).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_FRONTMATTER_CHARS = 256 * 1024
MAX_DEPTH = 20  # collections inside collections (Obsidian's own properties are flat)
# values (scalars, lists, mappings) plus scalar characters, with aliases expanded wherever used
MAX_EXPANDED = 1_000_000


class YamlLimitError(ValueError):
    """The YAML is over a limit; the message says which, for a warning."""


@dataclass(frozen=True)
class Frontmatter:
    """Loaded YAML with where things are: lines are 0-based lines of the YAML text."""

    data: Any
    key_lines: dict[str, int] = field(default_factory=dict)  # top-level key as written
    link_values: tuple[tuple[str, int], ...] = ()  # string values holding "[[", in order


def load(text: str) -> Any:
    """`yaml.safe_load(text)`, refusing (YamlLimitError) what is over a limit.

    Syntax errors raise yaml.YAMLError as usual.
    """
    return load_with_lines(text).data


def load_with_lines(text: str) -> Frontmatter:
    """`load`, plus the line of each top-level key and of each string value with a link."""
    if len(text) > MAX_FRONTMATTER_CHARS:
        raise YamlLimitError(
            f"frontmatter is {len(text):,} characters, over the {MAX_FRONTMATTER_CHARS:,} limit"
        )
    check(text)
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Frontmatter(None)
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    key_lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode):
                key_lines.setdefault(key.value, key.start_mark.line)
    links = tuple(_link_values(node)) if "[[" in text else ()
    return Frontmatter(data, key_lines, links)


def _link_values(node: yaml.Node) -> list[tuple[str, int]]:
    """String values (not keys) containing `[[`, in document order; `check` bounds the walk."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, yaml.ScalarNode):
            if "[[" in n.value:
                out.append((n.value, n.start_mark.line))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(reversed(n.value))
        elif isinstance(n, yaml.MappingNode):
            stack.extend(reversed([v for _, v in n.value]))
    return out


def _events(text: str) -> Iterator[yaml.Event]:
    """yaml.parse, with libyaml's own nesting limit (PyYAML 6.0.4+, checked while scanning,
    before our count sees the events) reported as our limit, not as broken YAML."""
    try:
        yield from yaml.parse(text, Loader=LOADER)
    except yaml.YAMLError as e:
        if "nesting depth" in str(e):
            raise YamlLimitError(f"frontmatter nests deeper than {MAX_DEPTH} levels") from None
        raise


def check(text: str) -> None:
    """Raise YamlLimitError when the document nests too deep, expands too much, or refers
    to itself (an alias inside its own anchor)."""
    total = 0  # expanded size of everything read so far
    stack: list[tuple[int, str | None]] = []  # open collections: (total at start, anchor)
    sizes: dict[str, int] = {}  # anchor -> expanded size of its value
    for event in _events(text):
        if isinstance(event, yaml.ScalarEvent):
            size = 1 + len(event.value)
            if event.anchor:
                sizes[event.anchor] = size
            total += size
        elif isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for _, anchor in stack):
                raise YamlLimitError("frontmatter refers to itself (recursive alias)")
            total += sizes.get(event.anchor or "", 1)  # an unknown one fails in the loader
        elif isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise YamlLimitError(f"frontmatter nests deeper than {MAX_DEPTH} levels")
            stack.append((total, event.anchor))
            total += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            start, anchor = stack.pop()
            if anchor:
                sizes[anchor] = total - start
        if total > MAX_EXPANDED:
            raise YamlLimitError(
                f"frontmatter expands to over {MAX_EXPANDED:,} values and characters "
                "(aliases repeating large values)"
            )
