"""The graph of the realistic example vault, checked against counts made by hand.

How the expected numbers were made: every `[[...]]`, `![[...]]` and `[..](..)` in
tests/fixtures/vaults/example was listed by reading the files (frontmatter properties
included, the one in the fenced code block of Pricing Model excluded) and resolved with
Obsidian's rules by hand: all targets are written as full vault paths except
`[[Roasting Partners]]`, `[[Roasters]]` (an alias: unresolved in Obsidian) and the markdown
link `Reference/Cupping%20Protocol.md`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.graph.results import ThemeTag
from engram.service import Engram

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"

# note -> [(linking note, line)], in path order
BACKLINKS = {
    "Projects/Pricing Model.md": [
        ("Home.md", 9),
        ("Meetings/2024-05-06 Weekly Sync.md", 11),  # [[...#^tiers]]
        ("People/Ana Ruiz.md", 7),
        ("Projects/Mobile App.md", 17),  # ![[...#Decision]] embed
    ],
    "Projects/Mobile App.md": [("Home.md", 9), ("People/Kenji Sato.md", 8)],
    "Roasting Partners.md": [("Home.md", 9), ("People/Kenji Sato.md", 8)],
    "People/Ana Ruiz.md": [
        ("Home.md", 10),
        ("Meetings/2024-05-06 Weekly Sync.md", 4),  # attendees property
        ("Projects/Pricing Model.md", 4),  # owner property
    ],
    "People/Kenji Sato.md": [
        ("Home.md", 10),
        ("Meetings/2024-05-06 Weekly Sync.md", 4),
        ("Projects/Mobile App.md", 19),
    ],
    "Meetings/2024-05-06 Weekly Sync.md": [
        ("Home.md", 11),
        ("People/Ana Ruiz.md", 9),
        ("Projects/Pricing Model.md", 23),  # [[...#Pricing|weekly sync]]
    ],
    "Reference/Payment Providers.md": [("Projects/Mobile App.md", 12)],
    "Reference/東京 出張メモ.md": [("Roasting Partners.md", 11)],
    "Reference/Cupping Protocol.md": [("Roasting Partners.md", 13)],  # markdown link
    "Reference/Cupping Protocol": [("Roasting Partners.md", 13)],
    "Home.md": [],
    "Daily/2024-05-07.md": [],
}


@pytest.fixture
def example(engram: Engram) -> Engram:
    """The example vault indexed as collection `brewline`."""
    engram.collection_add(str(EXAMPLE), "brewline")
    engram.update()
    return engram


def test_backlinks_match_the_hand_count(example: Engram) -> None:
    for note, expected in BACKLINKS.items():
        got = [(b.path, b.line) for b in example.backlinks(note).links]
        assert got == expected, note


def test_unresolved_orphans_and_subpaths(example: Engram) -> None:
    [stub] = example.unresolved()
    assert (stub.source, stub.target, stub.line) == (
        "Meetings/2024-05-06 Weekly Sync.md",
        "Roasters",
        20,
    )
    assert stub.alias_of == "Roasting Partners.md"
    assert example.unresolved(subpaths=True) == [stub]  # #^tiers, #Decision, #Pricing all exist
    assert [n.path for n in example.orphans()] == ["Daily/2024-05-07.md"]
    home = example.links("Home").links
    assert [(lk.path, lk.note) for lk in home][-1] == ("attachments/logo.png", False)


def test_neighbours_and_paths(example: Engram) -> None:
    near = example.neighbors("Kenji", 1).neighbors
    assert [(n.path, n.direction) for n in near] == [
        ("Home.md", "in"),
        ("Meetings/2024-05-06 Weekly Sync.md", "in"),
        ("Projects/Mobile App.md", "both"),
        ("Roasting Partners.md", "out"),
    ]
    route = example.path("Cupping Protocol", "Payment Providers")
    assert route.found and len(route.steps) == 5
    assert not example.path("Daily/2024-05-07", "Home").found


def test_rank_and_themes(example: Engram) -> None:
    influence = example.rank(n=3)
    assert influence.method == "PageRank"
    assert influence.notes[0].score == 1.0
    assert {n.path for n in influence.notes} <= {
        "Projects/Pricing Model.md",
        "Meetings/2024-05-06 Weekly Sync.md",
        "People/Ana Ruiz.md",
    }
    bridging = example.rank(by="bridging", n=1)
    assert bridging.notes[0].path == "Roasting Partners.md"  # the only way to Reference/
    about = example.rank(about="roasters espresso", n=3)
    assert about.method.startswith("PageRank among the")  # the topic's notes only
    assert about.notes[0].path == "Roasting Partners.md" and about.notes[0].hit
    themes = example.themes()
    assert sum(t.size for t in themes) == 10  # every note but the orphan
    assert [t.id for t in themes] == list(range(1, len(themes) + 1))
    assert themes == example.themes()
    roasting = next(t for t in themes if t.label == "Roasting Partners")
    assert ThemeTag("operations", 1) in roasting.tags
