"""Which links of a canvas a move breaks, and the canvas's new JSON. Pure: no I/O.

A canvas holds links in two places: the `file` of its file nodes (a vault path, rewritten to
the moved file's new path) and the markdown of its text nodes (each rewritten as a note's
links are, by `vault.relink`, keeping their style). The index stores the text-node links with
lines of the text the canvas reads as (vault/canvas.py), not of any one node, so where each
link resolved before the move is taken from the index by the link itself, and its place from
the node's own text. The JSON is written back in Obsidian's layout (one node or edge a line)
only when something changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .parse import parse_note
from .relink import StoredLink, relink
from .resolve import LinkIndex


def relink_canvas(
    text: str,
    source: str,
    links: Iterable[StoredLink],
    old: str,
    new: str,
    after: LinkIndex,
) -> tuple[str, int]:
    """(new JSON, links rewritten) of the canvas at `source` when `old` moves to `new`;
    `after` holds the vault's files after the move. A file that is not a canvas is left."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text, 0
    nodes = data.get("nodes") if isinstance(data, dict) else None
    if not isinstance(nodes, list):
        return text, 0
    resolved = {_key(lk): lk.resolved for lk in links if lk.kind != "canvas"}
    count = 0
    for node in nodes:
        if not isinstance(node, dict):
            continue
        if node.get("type") == "file" and node.get("file") == old:
            node["file"] = new
            count += 1
        elif node.get("type") == "text" and isinstance(node.get("text"), str):
            own = [
                StoredLink(
                    lk.kind, lk.target, lk.heading, lk.block, lk.display, lk.embed, lk.line,
                    resolved.get(_key(lk)),
                )
                for lk in parse_note(node["text"], source).links
            ]  # fmt: skip
            rewritten, n = relink(node["text"], source, own, old, new, after)
            if n:
                node["text"] = rewritten
                count += n
    return (dump_canvas(data), count) if count else (text, 0)


def _key(link: Any) -> tuple[object, ...]:
    return (link.kind, link.target, link.heading, link.block, link.display, bool(link.embed))


def dump_canvas(data: dict[str, Any]) -> str:
    """A canvas as Obsidian writes one: tab-indented, each node and edge on a line."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    parts = []
    for key, value in data.items():
        if isinstance(value, list) and key in ("nodes", "edges"):
            items = ",\n".join(f"\t\t{compact(v)}" for v in value)
            parts.append(f"\t{compact(key)}:[\n{items}\n\t]" if value else f"\t{compact(key)}:[]")
        else:
            parts.append(f"\t{compact(key)}:{compact(value)}")
    return "{\n" + ",\n".join(parts) + "\n}"
