"""The graph index file's text: the documented JSON, one node or edge per line."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from engram.graph.graph_index import Edge, GraphIndex, Node

names = st.text(min_size=1, max_size=12)
nodes = st.builds(
    lambda p, t: Node(f"note:{p}", "note", p, t, p), names, st.sampled_from(["note", "decision"])
)
edges = st.builds(
    lambda s, t, k, p, c: Edge(f"note:{s}", f"note:{t}", k, p, c),
    names,
    names,
    st.sampled_from(["wiki_link", "embed", "tag", "frontmatter_relation"]),
    st.sampled_from(["", "supersedes"]),
    st.integers(1, 5),
)


def documented(item: Node | Edge) -> dict[str, object]:
    """An item as docs/graph.md describes it: empty `type`, `path` and `property` left out."""
    if isinstance(item, Edge):
        edge = {"source": item.source, "target": item.target, "type": item.type}
        return edge | ({"property": item.property} if item.property else {}) | {"count": item.count}
    node = {"id": item.id, "kind": item.kind, "label": item.label}
    return node | {k: v for k, v in (("type", item.type), ("path", item.path)) if v}


@given(st.text(max_size=10), st.lists(nodes, max_size=6), st.lists(edges, max_size=6))
def test_the_text_is_the_documented_json_one_item_per_line(
    collection: str, ns: list[Node], es: list[Edge]
) -> None:
    index = GraphIndex(collection, tuple(ns), tuple(es))
    text = index.to_json()
    assert json.loads(text) == {
        "version": 1,
        "collection": collection,
        "edgeTypes": ["wiki_link", "embed", "tag", "frontmatter_relation"],
        "nodes": [documented(n) for n in ns],
        "edges": [documented(e) for e in es],
    }
    assert text.endswith("}\n")
    lines = text.split("\n")  # not splitlines: U+0085 in a name is no line break in JSON
    for item in [*ns, *es]:  # each item is a line of its own
        assert f"  {json.dumps(documented(item), ensure_ascii=False)}" in {
            line.rstrip(",") for line in lines
        }
