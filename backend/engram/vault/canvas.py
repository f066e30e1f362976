"""A JSON Canvas file (`.canvas`, jsoncanvas.org 1.0) as the markdown text the index keeps.

Text nodes are markdown already and stay as written; each labelled group becomes a heading
over the nodes inside it (nested groups, deeper headings); a file node becomes a `[[path]]`
line, and a link node its URL. Nodes are laid out in reading order (top to bottom, then left
to right), nodes outside every group first. The file nodes are returned beside the text, so
the indexer stores them as links of kind "canvas" (a note shown on a canvas gets the canvas
as a backlink), with the line their `[[path]]` has in the text.

The file is hostile input: it is read within the note size limit, JSON nesting is bounded by
the parser (too deep is an error, not a crash), and at most MAX_NODES nodes and MAX_GROUPS
groups are used, so placing nodes in groups is bounded too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

MAX_NODES = 10_000
MAX_GROUPS = 200  # nodes are placed in groups by n x g checks: 2,000,000 at most
MAX_LABEL_CHARS = 300


@dataclass(frozen=True)
class CanvasFile:
    """A file node: the vault path it shows, its `#heading` or `#^block`, its text line."""

    path: str
    subpath: str | None
    line: int


@dataclass(frozen=True)
class Canvas:
    """A canvas read as text, with its file nodes and what went wrong."""

    text: str
    files: tuple[CanvasFile, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Node:
    kind: str
    x: float
    y: float
    w: float
    h: float
    value: str  # text, file path, URL or group label
    subpath: str | None = None

    def inside(self, group: _Node) -> bool:
        cx, cy = self.x + self.w / 2, self.y + self.h / 2
        return group.x <= cx <= group.x + group.w and group.y <= cy <= group.y + group.h


def read_canvas(source: str) -> Canvas:
    """The canvas text `source` (JSON) as markdown; a file that is not a canvas gives an
    empty text and a warning, never an exception."""
    try:
        data = json.loads(source) if source.strip() else {}
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else "invalid JSON"
        return Canvas("", (), (f"not a JSON Canvas ({why}); indexed without content",))
    if not isinstance(data, dict) or not isinstance(data.get("nodes", []), list):
        return Canvas("", (), ("not a JSON Canvas (no list of nodes); indexed without content",))
    warnings: list[str] = []
    raw_nodes = data.get("nodes", [])
    if len(raw_nodes) > MAX_NODES:
        warnings.append(f"over {MAX_NODES:,} nodes: the first {MAX_NODES:,} are indexed")
    nodes = [n for n in (_node(item) for item in raw_nodes[:MAX_NODES]) if n is not None]
    groups = [n for n in nodes if n.kind == "group"]
    if len(groups) > MAX_GROUPS:
        warnings.append(f"over {MAX_GROUPS:,} groups: the first {MAX_GROUPS:,} become headings")
        groups = groups[:MAX_GROUPS]
    return _render(nodes, groups, tuple(warnings))


def _node(item: Any) -> _Node | None:
    """A node with the fields the text needs, or None when it is not a usable node."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    field = {"text": "text", "file": "file", "link": "url", "group": "label"}.get(str(kind))
    if field is None:
        return None
    value = item.get(field, "")
    if not isinstance(value, str):
        return None
    subpath = item.get("subpath") if kind == "file" else None
    if kind == "group":
        value = " ".join(value.split())[:MAX_LABEL_CHARS]
    elif kind != "text":
        value = value.strip()
    return _Node(
        str(kind),
        _number(item.get("x")),
        _number(item.get("y")),
        max(_number(item.get("width")), 0.0),
        max(_number(item.get("height")), 0.0),
        value,
        subpath if isinstance(subpath, str) and subpath.startswith("#") else None,
    )


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    number = float(value)
    return number if math.isfinite(number) else 0.0


def _render(nodes: list[_Node], groups: list[_Node], warnings: tuple[str, ...]) -> Canvas:
    """Nodes outside groups first, then each group under its label, in reading order."""
    index = {id(g): i for i, g in enumerate(groups)}
    rank = {id(g): (g.w * g.h, i) for i, g in enumerate(groups)}  # a group's parent ranks higher
    by_area = sorted(groups, key=lambda g: rank[id(g)])
    parent: dict[int, int | None] = {}  # id(node) -> index in `groups` of its smallest group
    for node in nodes:
        floor = rank.get(id(node), (-1.0, -1))
        own = next((g for g in by_area if rank[id(g)] > floor and node.inside(g)), None)
        parent[id(node)] = None if own is None else index[id(own)]
    children: dict[int | None, list[_Node]] = {}
    for node in sorted(nodes, key=lambda n: (n.y, n.x)):
        if node.kind == "group" and id(node) not in index:
            continue  # a group over the limit: its nodes are placed as if it were not there
        children.setdefault(parent[id(node)], []).append(node)
    lines: list[str] = []
    files: list[CanvasFile] = []

    def emit(owner: int | None, depth: int) -> None:
        kids = children.get(owner, [])
        # a group's own nodes before its subgroups: text under a heading stays under it
        for node in [k for k in kids if k.kind != "group"] + [k for k in kids if k.kind == "group"]:
            if node.kind == "group":
                if node.value:
                    lines.extend((f"{'#' * min(depth + 1, 6)} {node.value}", ""))
                emit(index[id(node)], depth + 1 if node.value else depth)
            elif node.kind == "file" and node.value:
                files.append(CanvasFile(node.value, node.subpath, len(lines) + 1))
                lines.extend((f"[[{node.value}{node.subpath or ''}]]", ""))
            elif node.value.strip():
                lines.extend((*node.value.strip("\n").splitlines(), ""))

    emit(None, 0)
    if lines and lines[0].startswith("---"):  # text, not frontmatter
        lines.insert(0, "")
        files = [CanvasFile(f.path, f.subpath, f.line + 1) for f in files]
    text = "\n".join(lines).rstrip("\n")
    return Canvas(text + "\n" if text else "", tuple(files), warnings)
