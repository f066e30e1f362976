"""The typed graph of a vault as one document: `<vault>/.engram/graph-index.json`.

Nodes are notes (typed decision / lesson / project / person / … by the caller, from the fact
type or the folder), tags and unresolved link targets. Edges are typed:

- `wiki_link`: a `[[link]]` or markdown link in a note's body to another note;
- `embed`: a `![[embed]]` of another note;
- `tag`: a note to each of its tags;
- `frontmatter_relation`: a property whose value links to a note (`entities`, `related`...),
  and a fact's `supersedes` / `supersededBy` / `contradictsWith` (fact ids, resolved to their
  notes); `property` names it.

Links to attachments and a note's links to itself are not edges. Everything is sorted and
nothing depends on the time, so an unchanged vault gives the same bytes.
"""

from __future__ import annotations

import json
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engram.codec import arg

VERSION = 1  # of a graph document: a part of the file, or an export
VERSION_PARTS = 2  # of graph-index.json, which lists the parts
EDGE_TYPES = ("wiki_link", "embed", "tag", "frontmatter_relation")
FACT_RELATIONS = ("supersedes", "supersededBy", "contradictsWith")


@dataclass(frozen=True, slots=True)
class Node:
    """A note, tag or unresolved target."""

    id: str  # note:<path>, tag:<tag>, unresolved:<target>
    kind: str  # note / tag / unresolved
    label: str  # a note's title, the tag, the target
    type: str = ""  # a note's type (decision, person, note...)
    path: str = ""  # a note's collection-relative path


@dataclass(frozen=True, order=True, slots=True)
class Edge:
    """A typed edge; `count` links of that type from source to target."""

    source: str
    target: str
    type: str
    property: str = ""
    count: int = 1


@dataclass(frozen=True)
class GraphIndex:
    """One collection's typed graph."""

    collection: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

    def to_json(self) -> str:
        """The file's text, the documented format (docs/graph.md; see `json_pieces`)."""
        return "".join(self.json_pieces())

    def json_pieces(self) -> Iterator[str]:
        """The file's text piece by piece (a 100,000-note vault's is 235 MB: written as it is
        made, it is never in memory whole): one node or edge per line, so a vault kept in git
        diffs by line. Each line goes through json's C encoder (an indented dump runs the
        pure-Python one: 15 s of that file)."""
        head = json.dumps(
            {"version": VERSION, "collection": self.collection, "edgeTypes": list(EDGE_TYPES)},
            ensure_ascii=False,
        )
        yield f'{head[:-1]},\n "nodes": '
        yield from _rows(self.nodes)
        yield ',\n "edges": '
        yield from _rows(self.edges)
        yield "\n}\n"

    def to_graphml(self) -> str:
        """The same graph as GraphML (Gephi, yEd, Cytoscape)."""
        keys = [
            ("n", "kind"),
            ("n", "label"),
            ("n", "type"),
            ("n", "path"),
            ("e", "type"),
            ("e", "property"),
        ]
        out = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        ]
        for scope, name in keys:
            out.append(
                f'  <key id="{scope}_{name}" for="{"node" if scope == "n" else "edge"}"'
                f' attr.name="{name}" attr.type="string"/>'
            )
        out.append('  <key id="e_count" for="edge" attr.name="count" attr.type="int"/>')
        out.append(f'  <graph id={_quoteattr(self.collection)} edgedefault="directed">')
        for n in self.nodes:
            out.append(f"    <node id={_quoteattr(n.id)}>")
            for name, value in (("kind", n.kind), ("label", n.label), ("type", n.type)):
                if value:
                    out.append(f'      <data key="n_{name}">{_text(value)}</data>')
            if n.path:
                out.append(f'      <data key="n_path">{_text(n.path)}</data>')
            out.append("    </node>")
        for e in self.edges:
            out.append(f"    <edge source={_quoteattr(e.source)} target={_quoteattr(e.target)}>")
            out.append(f'      <data key="e_type">{e.type}</data>')
            if e.property:
                out.append(f'      <data key="e_property">{_text(e.property)}</data>')
            out.append(f'      <data key="e_count">{e.count}</data>')
            out.append("    </edge>")
        out += ["  </graph>", "</graphml>", ""]
        return "\n".join(out)


def _text(value: str) -> str:
    return _quoteattr(value)[1:-1]


def _quoteattr(value: str) -> str:
    # imported here: xml.sax.saxutils brings urllib.request, http.client and ssl, ~25 ms of
    # every command's start-up for an export few commands make
    from xml.sax.saxutils import quoteattr

    return quoteattr(value)


def note_id(path: str) -> str:
    """The node id of a note."""
    return f"note:{path}"


def build(
    collection: str,
    documents: Iterable[tuple[Any, ...]],
    links: Iterable[tuple[Any, ...]],
    tags: Iterable[tuple[int, str]],
    type_of: Callable[[str, str], str],
    fact_paths: Mapping[str, str],
) -> GraphIndex:
    """The typed graph of some notes and of the links written in them, from the stored rows
    (store.graph.typed_documents / typed_links, each note's tags by name, once per tag
    whatever its case, and every fact's note path by fact id); `type_of(path, fact type)`
    names a note's type."""
    nodes: dict[str, Node] = {}
    front: dict[int, dict[str, Any]] = {}
    ids: dict[int, str] = {}  # each note's node id, made once and shared by all its edges
    for doc_id, path, title, fact_type, fm in documents:
        ids[doc_id] = note_id(path)
        nodes[ids[doc_id]] = Node(
            ids[doc_id], "note", title or path, type_of(path, fact_type), path
        )
        front[doc_id] = _load(fm)
    counts: dict[tuple[str, str, str, str], int] = {}

    def add(source: str, target: str, kind: str, prop: str = "") -> None:
        if source != target:
            key = (source, target, kind, prop)
            counts[key] = counts.get(key, 0) + 1

    for doc_id, kind, embed, target, target_path, is_file in links:
        if doc_id not in ids:
            continue
        src = ids[doc_id]
        if target_path is not None:
            dst = note_id(target_path)
        elif is_file:
            continue  # an attachment, or a file outside the collection's mask
        else:
            dst = f"unresolved:{target}"
            dst = nodes.setdefault(dst, Node(dst, "unresolved", target)).id  # one shared id
        if kind == "frontmatter":
            add(src, dst, "frontmatter_relation", _property(front.get(doc_id, {}), target))
        else:
            add(src, dst, "embed" if embed else "wiki_link")
    for doc_id, tag in tags:
        if doc_id in ids:
            tid = f"tag:{tag}"
            nodes.setdefault(tid, Node(tid, "tag", tag))
            add(ids[doc_id], tid, "tag")
    for doc_id, fm in front.items():
        for prop in FACT_RELATIONS:
            for ref in _ids(fm.get(prop)):
                other = fact_paths.get(ref)
                if other is not None:
                    add(ids[doc_id], note_id(other), "frontmatter_relation", prop)
    # keys are unique, so sorting them orders the edges as Edge's own order would, in C
    edges = tuple(Edge(s, t, k, p, c) for (s, t, k, p), c in sorted(counts.items()))
    return GraphIndex(collection, tuple(sorted(nodes.values(), key=lambda n: n.id)), edges)


def part_of(path: str, count: int) -> int:
    """The part of the graph file a note's node and the edges written in it are kept in."""
    return zlib.crc32(path.encode("utf-8")) % count


def split(index: GraphIndex, count: int) -> dict[int, GraphIndex]:
    """The graph cut into parts by note (`part_of`): each note's node and the edges from it,
    with the tag and unresolved nodes those edges reach (so such a node is in every part
    that reaches it); the parts that hold something, by number."""
    others = {n.id: n for n in index.nodes if n.kind != "note"}
    nodes: dict[int, dict[str, Node]] = {}
    edges: dict[int, list[Edge]] = {}
    for n in index.nodes:
        if n.kind == "note":
            nodes.setdefault(part_of(n.path, count), {})[n.id] = n
    for e in index.edges:
        part = part_of(e.source.removeprefix("note:"), count)
        edges.setdefault(part, []).append(e)
        if e.target in others:
            nodes.setdefault(part, {})[e.target] = others[e.target]
    return {
        part: GraphIndex(
            index.collection,
            tuple(sorted(nodes.get(part, {}).values(), key=lambda n: n.id)),
            tuple(edges.get(part, ())),
        )
        for part in sorted(nodes.keys() | edges.keys())
    }


def _load(fm: Any) -> dict[str, Any]:
    try:
        data = json.loads(fm) if isinstance(fm, str) else fm
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _ids(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [x.strip() for x in items if isinstance(x, str) and x.strip()]


def _property(fm: dict[str, Any], target: str) -> str:
    """The first property whose value holds a link to `target` (the link row has no key)."""
    needle = f"[[{target}"
    for key, value in fm.items():
        if needle in json.dumps(value, ensure_ascii=False):
            return str(key)
    return ""


@dataclass(frozen=True)
class TypedNeighbor:
    """A node within some hops of a note, following edges of chosen types."""

    id: str
    kind: str
    label: str
    path: str | None  # a note's; None for a tag or an unresolved target
    hops: int = arg(wire="distance")
    via: str = arg()  # the edge type that first reached it


def neighbors(
    index: GraphIndex,
    start: str,
    depth: int,
    edge_types: Iterable[str],
    direction: str = "both",
) -> list[TypedNeighbor]:
    """Nodes within `depth` edges of node `start` (a note id), following only `edge_types`
    (out: as written, in: backwards, both), nearest first then by id."""
    wanted = set(edge_types)
    adjacent: dict[str, list[tuple[str, str]]] = {}
    for e in index.edges:
        if e.type not in wanted:
            continue
        if direction in ("out", "both"):
            adjacent.setdefault(e.source, []).append((e.target, e.type))
        if direction in ("in", "both"):
            adjacent.setdefault(e.target, []).append((e.source, e.type))
    seen = {start: (0, "")}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        hops = seen[node][0]
        if hops >= depth:
            continue
        for other, kind in sorted(adjacent.get(node, ())):
            if other not in seen:
                seen[other] = (hops + 1, kind)
                queue.append(other)
    by_id = {n.id: n for n in index.nodes}
    out = [
        TypedNeighbor(nid, by_id[nid].kind, by_id[nid].label, by_id[nid].path or None, hops, via)
        for nid, (hops, via) in seen.items()
        if nid != start and nid in by_id
    ]
    return sorted(out, key=lambda n: (n.hops, n.id))


def _rows(items: Iterable[Node] | Iterable[Edge]) -> Iterator[str]:
    """A JSON array, one item per line."""
    first = True
    for item in items:
        yield ("[\n  " if first else ",\n  ") + json.dumps(_row(item), ensure_ascii=False)
        first = False
    yield "[]" if first else "\n ]"


def _row(item: Node | Edge) -> dict[str, Any]:
    """A node or edge as the file writes it. Written out rather than through engram.codec:
    the format leaves empty optional fields out, and a 100,000-note vault's file has
    millions of rows, which the codec's generic walk would make ~2x slower to write."""
    if isinstance(item, Edge):
        edge: dict[str, Any] = {"source": item.source, "target": item.target, "type": item.type}
        if item.property:
            edge["property"] = item.property
        edge["count"] = item.count
        return edge
    node = {"id": item.id, "kind": item.kind, "label": item.label}
    if item.type:
        node["type"] = item.type
    if item.path:
        node["path"] = item.path
    return node
