"""graph-index.json kept part by part: after any sequence of changes (notes added, edited,
renamed, deleted; links that start or stop resolving; tags whose shown spelling flips; facts
superseded), the parts read back as the whole graph a rebuild makes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from engram.service import Engram
from engram.service import graph_files as gf
from tests.integration.test_graph_index import index_of

TAGS = ["#Roast", "#roast", "#ROAST", "#roast/Beans", "#Roast/beans", "#cafe", "#Café/Menu"]


def note_text(rng: random.Random, names: list[str]) -> str:
    """A note linking to some of `names` (and to names no note has yet), with tags."""
    links = [f"[[{rng.choice(names)}]]" for _ in range(rng.randint(0, 4))]
    links += [f"![[{rng.choice(names)}]]" for _ in range(rng.randint(0, 1))]
    tags = rng.sample(TAGS, rng.randint(0, 3))
    related = f"related: '[[{rng.choice(names)}]]'\n" if rng.random() < 0.3 else ""
    return f"---\n{related}---\n# A note\n\n{' '.join(links)} {' '.join(tags)}\n"


def parts_of(vault: Path) -> int:
    return len(json.loads((vault / ".engram/graph-index.json").read_text())["parts"])


@pytest.mark.parametrize("seed", range(4))
def test_the_parts_are_always_what_a_rebuild_makes(
    mem: Engram, vault: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gf, "NOTES_PER_PART", 4)  # the example vault in several parts
    rng = random.Random(seed)
    names = [f"N{i}" for i in range(14)] + ["Ana Ruiz", "Kenji Sato"]
    mem.update()
    counts = set()
    facts = []
    for _step in range(30):
        present = sorted(p.stem for p in vault.glob("N*.md"))
        action = rng.choice(["add", "add", "edit", "rename", "delete", "fact", "supersede"])
        if action == "add" or not present:
            name = rng.choice([n for n in names if n not in present] or names)
            (vault / f"{name}.md").write_text(note_text(rng, names))
        elif action == "edit":
            (vault / f"{rng.choice(present)}.md").write_text(note_text(rng, names))
        elif action == "rename":
            free = [n for n in names[:14] if n not in present]
            if free:
                mem.note_move(f"{rng.choice(present)}.md", f"{rng.choice(free)}.md")
        elif action == "delete":
            (vault / f"{rng.choice(present)}.md").unlink()
        elif action == "fact":
            facts.append(mem.fact_add(f"We decided thing {_step}", entities=[rng.choice(names)]))
        elif facts:
            old = facts.pop(rng.randrange(len(facts)))
            facts.append(mem.fact_supersede(old.id, f"We decided again {_step}").new)
        mem.update()
        whole = json.loads(mem.graph_export("json").text)
        assert index_of(vault) == whole, (seed, _step, action)
        counts.add(parts_of(vault))
    assert max(counts) > 1


def test_a_tag_shown_another_way_is_rewritten_in_every_part(
    mem: Engram, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tag is one node named as most notes spell it: when that flips, the parts of notes
    nobody touched change too."""
    monkeypatch.setattr(gf, "NOTES_PER_PART", 2)
    for i in range(30):
        (vault / f"N{i}.md").write_text(f"# N{i}\n\n#Roast\n" if i < 10 else f"# N{i}\n")
    mem.update()
    for i in range(10, 21):
        (vault / f"N{i}.md").write_text(f"# N{i}\n\n#roast\n")
        mem.update()
    assert "tag:roast" in {n["id"] for n in index_of(vault)["nodes"]}
    assert index_of(vault) == json.loads(mem.graph_export("json").text)


def test_a_moved_note_can_flip_a_tied_tag_name(mem: Engram, vault: Path) -> None:
    """Between equal votes the spelling seen first (by path) names a tag: a move changes
    which that is, though no tag row changed."""
    (vault / "A tie.md").write_text("# A\n\n#Tied\n")
    (vault / "B tie.md").write_text("# B\n\n#tied\n")
    mem.update()
    assert "tag:Tied" in {n["id"] for n in index_of(vault)["nodes"]}
    mem.note_move("A tie.md", "Z tie.md")
    assert "tag:tied" in {n["id"] for n in index_of(vault)["nodes"]}
    assert index_of(vault) == json.loads(mem.graph_export("json").text)


def test_a_moved_fact_moves_the_edges_of_the_facts_citing_it(
    mem: Engram, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`supersedes: <id>` names a fact, not a file: moving the fact's note changes the edge
    of a note that did not change."""
    monkeypatch.setattr(gf, "NOTES_PER_PART", 2)
    for i in range(30):
        (vault / f"N{i}.md").write_text(f"# N{i}\n")
    old = mem.fact_add("We decided to roast on Mondays")
    new = mem.fact_supersede(old.id, "We decided to roast on Tuesdays").new
    mem.note_move(old.path, "Elsewhere/Old decision.md")
    edges = index_of(vault)["edges"]
    assert any(e["target"] == "note:Elsewhere/Old decision.md" for e in edges), new.path
    assert index_of(vault) == json.loads(mem.graph_export("json").text)


def test_one_changed_note_rewrites_only_its_part(
    mem: Engram, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gf, "NOTES_PER_PART", 2)
    for i in range(40):
        (vault / f"N{i}.md").write_text(f"# N{i}\n\n[[N{(i + 1) % 40}]] #tag{i % 3}\n")
    mem.update()
    count = parts_of(vault)
    assert count >= 8
    parts = sorted((vault / ".engram/graph-index").glob("*.json"))
    before = {p.name: p.stat().st_mtime_ns for p in parts}
    (vault / "N5.md").write_text("# N5\n\n[[N7]] #tag2\n")
    mem.update()
    after = {p.name: p.stat().st_mtime_ns for p in parts}
    changed = [name for name in before if before[name] != after[name]]
    assert changed == [f"{gf.gi.part_of('N5.md', count):04d}.json"]
    assert index_of(vault) == json.loads(mem.graph_export("json").text)


def test_a_hostile_head_file_is_written_again_not_followed(mem: Engram, vault: Path) -> None:
    """A graph-index.json listing a million parts (or not Engram's shape) costs no stat per
    entry: it is not a file Engram wrote, so the graph file is made whole again."""
    head = vault / ".engram/graph-index.json"
    for text in (
        json.dumps({"version": 2, "collection": "Brewline", "parts": ["x"] * 1_000_000}),
        json.dumps({"version": 2, "collection": "Brewline", "edgeTypes": [], "parts": ["../x"]}),
    ):
        head.write_text(text)
        (vault / "Touched.md").write_text(f"# T\n\n{len(text)} [[Ana Ruiz]]\n")
        mem.update()
        assert index_of(vault) == json.loads(mem.graph_export("json").text)
