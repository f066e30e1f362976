"""Graph operations on small hand-made graphs (networkx, no index)."""

from __future__ import annotations

import random

import pytest

from engram.errors import NotFoundError
from engram.graph import model
from engram.graph.model import VaultGraph
from engram.graph.notes import NoteFinder


def graph(edges: list[tuple[str, str]], extra: tuple[str, ...] = ()) -> VaultGraph:
    """Nodes named by letters; ids are positions in the sorted name list."""
    names = sorted({n for e in edges for n in e} | set(extra))
    ids = {n: i for i, n in enumerate(names)}
    return VaultGraph(
        [(ids[n], f"{n}.md", n.upper()) for n in names],
        [(ids[a], ids[b], 1) for a, b in edges],
    )


def node(g: VaultGraph, name: str) -> int:
    return next(i for i, (p, _) in g.info.items() if p == f"{name}.md")


def names(g: VaultGraph, ids: list[int]) -> list[str]:
    return [g.path_of(i).removesuffix(".md") for i in ids]


# two triangles (a-b-c, x-y-z) joined through the bridge c -> m -> x
BRIDGED = [
    ("a", "b"), ("b", "c"), ("c", "a"), ("a", "c"),
    ("x", "y"), ("y", "z"), ("z", "x"), ("x", "z"),
    ("c", "m"), ("m", "x"),
]  # fmt: skip


def test_neighbors_follow_links_backlinks_or_both() -> None:
    g = graph([("a", "b"), ("b", "c"), ("d", "a")], extra=("lonely",))
    a = node(g, "a")
    both = [(names(g, [n])[0], d, how) for n, d, how in g.neighbors(a, 2)]
    assert both == [("b", 1, "out"), ("d", 1, "in"), ("c", 2, "out")]
    assert names(g, [n for n, _, _ in g.neighbors(a, 5, "out")]) == ["b", "c"]
    assert names(g, [n for n, _, _ in g.neighbors(a, 5, "in")]) == ["d"]
    mixed = graph([("a", "b"), ("c", "b")])
    assert [(d, how) for _, d, how in mixed.neighbors(node(mixed, "a"), 2)] == [
        (1, "out"),
        (2, "mixed"),
    ]


def test_shortest_path_ignores_direction_unless_asked() -> None:
    g = graph([("a", "b"), ("c", "b"), ("c", "d")])
    steps = g.shortest_path(node(g, "a"), node(g, "d"))
    assert [(names(g, [n])[0], how) for n, how in steps] == [
        ("a", None),
        ("b", "out"),
        ("c", "in"),
        ("d", "out"),
    ]
    assert g.shortest_path(node(g, "a"), node(g, "d"), directed=True) == []
    loop = graph([("a", "b"), ("b", "a")])
    assert loop.shortest_path(node(loop, "a"), node(loop, "b"))[1][1] == "both"


def test_orphans_are_notes_without_links_to_other_notes() -> None:
    g = VaultGraph([(1, "a.md", "A"), (2, "b.md", "B"), (3, "c.md", "C")], [(1, 2, 1), (3, 3, 2)])
    assert g.orphans() == [3]  # a self-link does not count
    assert g.edge_count == 1
    assert g.degrees(1) == (0, 1)


def test_pagerank_favours_the_most_linked_note() -> None:
    g = graph([("a", "hub"), ("b", "hub"), ("c", "hub"), ("hub", "a")])
    ranks = g.pagerank()
    assert max(ranks, key=lambda n: ranks[n]) == node(g, "hub")
    assert sum(ranks.values()) == pytest.approx(1.0)
    assert g.pagerank() is ranks  # cached


def test_personalised_pagerank_stays_near_the_seeds() -> None:
    g = graph(BRIDGED)
    near_a = g.pagerank({node(g, "a"): 1.0})
    near_z = g.pagerank({node(g, "z"): 1.0})
    assert near_a[node(g, "b")] > near_a[node(g, "y")]
    assert near_z[node(g, "y")] > near_z[node(g, "b")]


def test_topic_rank_ranks_the_topics_notes_not_the_vaults_hub() -> None:
    """Everything links to `hub`; the topic's notes a, b, c link among themselves and to the
    hub, which mentions the topic in passing (low relevance). Whole-vault personalised
    PageRank puts the hub first; ranking within the topic puts the topic's own hub first."""
    edges = [(n, "hub") for n in ("a", "b", "c", "p", "q", "r", "s")]
    edges += [("b", "a"), ("c", "a"), ("a", "b"), ("hub", "p")]
    g = graph(edges)
    relevance = {node(g, "a"): 0.7, node(g, "b"): 0.7, node(g, "c"): 0.7, node(g, "hub"): 0.3}
    whole = g.pagerank(relevance)
    assert max(whole, key=lambda n: whole[n]) == node(g, "hub")  # the problem
    topic = g.topic_rank(relevance)
    assert set(topic) == set(relevance)  # only notes about the topic
    assert max(topic, key=lambda n: topic[n]) == node(g, "a")
    assert topic[node(g, "hub")] < topic[node(g, "a")]
    assert g.linked_from(node(g, "a"), relevance) == 2 and g.linked_from(node(g, "hub"), []) == 0
    assert g.topic_rank({node(g, "a"): 0.0}) == {} and g.topic_rank({}) == {}


def test_betweenness_finds_the_bridge() -> None:
    g = graph(BRIDGED)
    scores, method = g.betweenness()
    assert method == "exact betweenness"
    assert max(scores, key=lambda n: scores[n]) == node(g, "m")
    sub, _ = g.betweenness([node(g, n) for n in "abc"])
    assert set(sub) == {node(g, n) for n in "abc"}


def test_betweenness_samples_large_graphs_with_a_fixed_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(model, "BETWEENNESS_BUDGET", 40)  # 7 nodes + 9 edges: 2 sources
    monkeypatch.setattr(model, "MIN_SAMPLES", 4)
    first, method = graph(BRIDGED).betweenness()
    again, _ = graph(BRIDGED).betweenness()
    assert method == "betweenness estimated from 4 sampled notes"
    assert first == again


def test_louvain_communities_are_stable_and_ordered() -> None:
    g = graph(BRIDGED, extra=("single",))
    groups = [names(g, c) for c in g.communities()]
    # the bridge "m" ties between the two triangles; either side is right, but always the same
    assert groups in (
        [["a", "b", "c", "m"], ["x", "y", "z"], ["single"]],
        [["m", "x", "y", "z"], ["a", "b", "c"], ["single"]],
    )  # largest first
    assert groups[-1] == ["single"]
    assert [len(c) for c in groups] == sorted((len(c) for c in groups), reverse=True)
    shuffled = list(BRIDGED)
    random.Random(3).shuffle(shuffled)
    assert [names(g, c) for c in graph(shuffled, extra=("single",)).communities()] == groups


def test_empty_graph_answers_without_errors() -> None:
    g = VaultGraph([], [])
    assert g.pagerank() == {}
    assert g.communities() == []
    assert g.orphans() == []
    assert g.betweenness() == ({}, "exact betweenness")


FINDER_ROWS = [
    (1, "Projects/Pricing Model.md", "Pricing Model", ["pricing plan"]),
    (2, "People/Kenji Sato.md", "Kenji Sato", ["Kenji"]),
    (3, "a/Note.md", "Note", []),
    (4, "b/Note.md", "Note", []),
    (5, "Daily/2024-05-07.md", "Tuesday standup", []),
    (6, "Daily/2024-05-08.md", "2024-05-08", []),
    (7, "Café Notes.md", "Café Notes", []),
]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("Projects/Pricing Model.md", "Projects/Pricing Model.md"),  # path
        ("projects/pricing model", "Projects/Pricing Model.md"),  # path, any case, no .md
        ("Pricing Model", "Projects/Pricing Model.md"),  # file name
        ("Kenji", "People/Kenji Sato.md"),  # alias
        ("PRICING PLAN", "Projects/Pricing Model.md"),  # alias, any case
        ("Tuesday standup", "Daily/2024-05-07.md"),  # title
        ("pricing", "Projects/Pricing Model.md"),  # a part only one note has
        ("a/Note", "a/Note.md"),
        ("cafe notes", "Café Notes.md"),  # accents are optional
    ],
)
def test_finder_accepts_path_name_alias_title(query: str, path: str) -> None:
    assert NoteFinder(FINDER_ROWS).find(query).path == path


@pytest.mark.parametrize(
    ("query", "message", "suggested"),
    [
        ("Note", "several notes match", ["a/Note.md", "b/Note.md"]),
        ("2024-05", "several notes match", ["Daily/2024-05-07.md", "Daily/2024-05-08.md"]),
        ("Pricng Modle", "no note matches", ["Projects/Pricing Model.md"]),
        ("zzzzzz", "no note matches", []),
    ],
)
def test_finder_says_did_you_mean(query: str, message: str, suggested: list[str]) -> None:
    with pytest.raises(NotFoundError) as err:
        NoteFinder(FINDER_ROWS).find(query)
    assert message in err.value.message
    assert sorted(err.value.suggestions) == suggested


def test_finder_names_the_holder_of_an_alias() -> None:
    finder = NoteFinder(FINDER_ROWS)
    assert finder.alias_holder("kenji") == "People/Kenji Sato.md"
    assert finder.alias_holder("Nobody") is None
