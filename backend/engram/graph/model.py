"""The vault's link graph in networkx: neighbours, paths, PageRank, betweenness, Louvain.

Nodes are indexed notes (document ids); an edge A -> B carries the number of links from A to
B that resolve to B. Self-links (`[[#Heading]]`) and links to attachments or to nothing are
not edges. Everything expensive is computed once per graph and kept (the facade rebuilds the
graph only when the index changed), and everything random uses a fixed seed, so the same
vault always gives the same answer. networkx is imported when a graph is built, not with this
module: backlinks, links and unresolved links never build one, and its import alone takes a
quarter of a second.
"""

from __future__ import annotations

import itertools
import random
import threading
from collections import deque
from collections.abc import Iterable
from typing import Any

SEED = 42
# Betweenness costs one breadth-first search per source note, each visiting every node and
# edge. Past this many visits in all, sources are sampled (fixed seed) to stay within it.
BETWEENNESS_BUDGET = 1_500_000
MIN_SAMPLES = 20
PAGERANK_ALPHA = 0.85


class VaultGraph:
    """Directed, weighted note graph of one collection, with cached metrics."""

    def __init__(
        self, notes: Iterable[tuple[int, str, str]], edges: Iterable[tuple[int, int, int]]
    ) -> None:
        import networkx as nx

        self.g: Any = nx.DiGraph()
        self.info: dict[int, tuple[str, str]] = {}  # id -> (path, title)
        for doc_id, path, title in sorted(notes, key=lambda n: n[1]):
            self.info[doc_id] = (path, title)
            self.g.add_node(doc_id)
        self.g.add_weighted_edges_from(
            (a, b, w) for a, b, w in edges if a != b and a in self.info and b in self.info
        )
        self._lock = threading.RLock()  # metrics may build the undirected view
        self._undirected: Any = None
        self._pagerank: dict[int, float] | None = None
        self._betweenness: tuple[dict[int, float], str] | None = None
        self._communities: list[list[int]] | None = None

    def __len__(self) -> int:
        return int(self.g.number_of_nodes())

    @property
    def edge_count(self) -> int:
        """Number of (source, target) note pairs linked."""
        return int(self.g.number_of_edges())

    def path_of(self, node: int) -> str:
        """A node's collection-relative path."""
        return self.info[node][0]

    def title_of(self, node: int) -> str:
        """A node's title."""
        return self.info[node][1]

    def undirected(self) -> Any:
        """The graph with link direction dropped; weights of A->B and B->A add up."""
        with self._lock:
            if self._undirected is None:
                import networkx as nx

                u = nx.Graph()
                u.add_nodes_from(self.g.nodes)
                for a, b, w in self.g.edges(data="weight"):
                    if u.has_edge(a, b):
                        u[a][b]["weight"] += w
                    else:
                        u.add_edge(a, b, weight=w)
                self._undirected = u
            return self._undirected

    def orphans(self) -> list[int]:
        """Notes with no link to or from another note, by path."""
        return [n for n in self.g.nodes if self.g.degree(n) == 0]

    def degrees(self, node: int) -> tuple[int, int]:
        """(notes linking here, notes linked from here)."""
        return int(self.g.in_degree(node)), int(self.g.out_degree(node))

    def neighbors(
        self, node: int, depth: int, direction: str = "both"
    ) -> list[tuple[int, int, str]]:
        """Notes within `depth` hops: (node, hops, how reached), nearest first then by path.

        `direction` out follows links, in follows backlinks, both follows either; the
        reported "how" is out / in / both when the note is reachable within `depth` following
        links only / backlinks only / either way, and mixed when only by changing direction.
        """
        out_d = _bfs(self.g.successors, node, depth)
        in_d = _bfs(self.g.predecessors, node, depth)
        if direction == "out":
            dist = out_d
        elif direction == "in":
            dist = in_d
        else:
            dist = _bfs(self.undirected().neighbors, node, depth)
        result = []
        for other, hops in dist.items():
            if other == node:
                continue
            how = (
                "both"
                if other in out_d and other in in_d
                else "out"
                if other in out_d
                else "in"
                if other in in_d
                else "mixed"
            )
            result.append((other, hops, how))
        result.sort(key=lambda r: (r[1], self.path_of(r[0])))
        return result

    def shortest_path(self, a: int, b: int, directed: bool = False) -> list[tuple[int, str | None]]:
        """The fewest-hops chain from a to b as (node, direction from the previous node)."""
        import networkx as nx

        graph = self.g if directed else self.undirected()
        try:
            nodes = nx.shortest_path(graph, a, b)
        except nx.NetworkXNoPath:
            return []
        steps: list[tuple[int, str | None]] = [(nodes[0], None)]
        for prev, cur in itertools.pairwise(nodes):
            fwd, back = self.g.has_edge(prev, cur), self.g.has_edge(cur, prev)
            steps.append((cur, "both" if fwd and back else "out" if fwd else "in"))
        return steps

    def pagerank(self, personalization: dict[int, float] | None = None) -> dict[int, float]:
        """PageRank over links weighted by count; personalised when seeds are given."""
        import networkx as nx

        if len(self) == 0:
            return {}
        if personalization:
            return dict(
                nx.pagerank(
                    self.g, alpha=PAGERANK_ALPHA, personalization=personalization, weight="weight"
                )
            )
        with self._lock:
            if self._pagerank is None:
                self._pagerank = dict(nx.pagerank(self.g, alpha=PAGERANK_ALPHA, weight="weight"))
            return self._pagerank

    def topic_rank(self, relevance: dict[int, float]) -> dict[int, float]:
        """Influence about a topic: PageRank among the topic's notes alone (the links between
        them), restarting at each in proportion to its relevance, times that relevance.

        Personalised PageRank over the whole vault let the vault's hubs win any topic: a
        settings page every note links to collects the mass the topic's notes pass on. Here a
        note ranks high when it matches the topic well and the topic's other notes link to it.
        """
        nodes = [n for n, r in relevance.items() if n in self.info and r > 0]
        if not nodes:
            return {}
        import networkx as nx

        sub = self.g.subgraph(nodes)
        weights = {n: relevance[n] for n in nodes}
        ranks = nx.pagerank(sub, alpha=PAGERANK_ALPHA, personalization=weights, weight="weight")
        return {n: ranks[n] * weights[n] for n in nodes}

    def linked_from(self, node: int, among: Iterable[int]) -> int:
        """How many of the notes `among` link to `node` (itself excluded)."""
        sources = set(among)
        return sum(1 for p in self.g.predecessors(node) if p in sources and p != node)

    def betweenness(self, nodes: Iterable[int] | None = None) -> tuple[dict[int, float], str]:
        """Betweenness centrality (link direction ignored) and how it was computed.

        Exact while one search per note fits BETWEENNESS_BUDGET; above, estimated from as many
        source notes as fit (at least MIN_SAMPLES) drawn with a fixed seed. `nodes`
        restricts it to their subgraph.
        """
        if nodes is not None:
            return _betweenness(self.undirected().subgraph(list(nodes)))
        with self._lock:
            if self._betweenness is None:
                self._betweenness = _betweenness(self.undirected())
            return self._betweenness

    def communities(self) -> list[list[int]]:
        """Louvain communities (fixed seed), largest first, each sorted by path."""
        u = self.undirected()
        with self._lock:
            if self._communities is None:
                found = _louvain(u) if len(u) else []
                groups = [sorted(c, key=self.path_of) for c in found]
                groups.sort(key=lambda c: (-len(c), self.path_of(c[0])))
                self._communities = groups
            return self._communities


def _louvain(graph: Any) -> list[list[int]]:
    """Louvain communities of an undirected weighted networkx graph, computed by igraph's C
    implementation (networkx's pure-Python one takes seconds on a 10k-note vault)."""
    import igraph

    nodes = list(graph.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    edges = [(index[a], index[b]) for a, b in graph.edges]
    g = igraph.Graph(n=len(nodes), edges=edges)
    g.es["weight"] = [w for _, _, w in graph.edges(data="weight", default=1.0)]
    igraph.set_random_number_generator(random.Random(SEED))  # fixed seed: stable communities
    try:
        parts = g.community_multilevel(weights="weight")
    finally:
        igraph.set_random_number_generator(random)
    return [[nodes[i] for i in members] for members in parts if members]


def _bfs(step: Any, start: int, depth: int) -> dict[int, int]:
    seen = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if seen[node] >= depth:
            continue
        for nxt in step(node):
            if nxt not in seen:
                seen[nxt] = seen[node] + 1
                queue.append(nxt)
    return seen


def _betweenness(graph: Any) -> tuple[dict[int, float], str]:
    import networkx as nx

    n = graph.number_of_nodes()
    samples = max(MIN_SAMPLES, BETWEENNESS_BUDGET // max(n + graph.number_of_edges(), 1))
    if samples >= n:
        return dict(nx.betweenness_centrality(graph)), "exact betweenness"
    scores = nx.betweenness_centrality(graph, k=samples, seed=SEED)
    return dict(scores), f"betweenness estimated from {samples} sampled notes"
