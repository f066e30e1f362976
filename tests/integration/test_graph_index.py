"""The graph index file agrees with the graph commands; graph export; typed neighbours;
graph view colours in a real vault's graph.json."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from engram.errors import ConflictError
from engram.graph.graph_index import EDGE_TYPES
from engram.service import Engram
from tests.conftest import EngramCli


def index_of(vault: Path) -> dict:
    """The whole graph as docs/graph.md tells a reader to make it: the parts graph-index.json
    lists, their nodes merged by id and their edges put together, in export's order."""
    head = json.loads((vault / ".engram/graph-index.json").read_text())
    assert head["version"] == 2 and head["edgeTypes"] == list(EDGE_TYPES)
    nodes: dict[str, dict] = {}
    edges: list[dict] = []
    for name in head["parts"]:
        part = json.loads((vault / ".engram" / name).read_text())
        assert part["version"] == 1 and part["collection"] == head["collection"]
        for node in part["nodes"]:
            assert nodes.setdefault(node["id"], node) == node  # the same in every part
        edges += part["edges"]
    order = sorted(
        edges, key=lambda e: (e["source"], e["target"], e["type"], e.get("property", ""))
    )
    return {
        "version": 1,
        "collection": head["collection"],
        "edgeTypes": head["edgeTypes"],
        "nodes": sorted(nodes.values(), key=lambda n: n["id"]),
        "edges": order,
    }


def test_the_index_file_is_what_the_graph_commands_report(mem: Engram, vault: Path) -> None:
    data = index_of(vault)
    assert data["version"] == 1 and data["collection"] == "Brewline"
    assert data == json.loads(mem.graph_export("json").text)
    notes = {n["path"] for n in data["nodes"] if n["kind"] == "note"}
    assert notes == {p for (p,) in mem.db.conn.execute("SELECT path FROM documents")}
    links = Counter()
    for e in data["edges"]:
        if e["type"] in ("wiki_link", "embed", "frontmatter_relation") and e["target"].startswith(
            "note:"
        ):
            links[(e["source"][5:], e["target"][5:], e["type"])] += e["count"]
    reported = Counter()
    for path in notes:
        for link in mem.links(path).links:
            if link.note and link.path != path:
                kind = (
                    "frontmatter_relation"
                    if link.kind == "frontmatter"
                    else ("embed" if link.embed else "wiki_link")
                )
                reported[(path, link.path, kind)] += 1
    assert links == reported and links
    unresolved = {e["target"][11:] for e in data["edges"] if e["target"].startswith("unresolved:")}
    assert unresolved == {u.target for u in mem.unresolved()}
    tags = {(e["source"][5:], e["target"][4:]) for e in data["edges"] if e["type"] == "tag"}
    assert ("People/Ana Ruiz.md", "person") in tags
    for path in sorted(notes)[:6]:  # typed neighbours over every link type = graph neighbors
        for depth in (1, 2):
            typed = mem.typed_neighbors(path, ["wiki_link", "embed", "frontmatter_relation"], depth)
            plain = mem.neighbors(path, depth)
            assert {n.path for n in typed.neighbors if n.kind == "note"} == {
                n.path for n in plain.neighbors
            }


def test_fact_relations_are_typed_edges_and_the_file_follows_updates(
    mem: Engram, vault: Path
) -> None:
    old = mem.fact_add("We decided to roast on Mondays", entities=["Kenji Sato"])
    new = mem.fact_supersede(old.id, "We decided to roast on Tuesdays").new
    edges = index_of(vault)["edges"]
    rel = {(e["source"][5:], e["target"][5:], e.get("property")) for e in edges}
    assert (new.path, old.path, "supersedes") in rel and (old.path, new.path, "supersededBy") in rel
    assert (old.path, "People/Kenji Sato.md", "entities") in rel
    types = {n["path"]: n["type"] for n in index_of(vault)["nodes"] if n["kind"] == "note"}
    assert types[old.path] == "decision" and types["People/Ana Ruiz.md"] == "person"
    before = (vault / ".engram/graph-index.json").stat().st_mtime_ns
    mem.update()  # nothing changed: the file is not rewritten
    assert (vault / ".engram/graph-index.json").stat().st_mtime_ns == before


def test_a_new_process_learns_the_file_is_current_without_building_the_graph(
    mem: Engram, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file's state is kept in the index: a later process's no-op update builds no graph
    (at 100,000 notes that build was 33 s of each `engram update`); a change, or a deleted
    file, still gets it written."""
    from engram.service.graph_files import GraphFiles

    mem.update()
    path = vault / ".engram/graph-index.json"
    before = path.read_bytes()
    fresh = Engram(mem.settings)
    real = GraphFiles._graph
    monkeypatch.setattr(GraphFiles, "_graph", lambda *a: pytest.fail("graph built"))
    fresh.update()
    monkeypatch.setattr(GraphFiles, "_graph", real)
    assert path.read_bytes() == before
    (vault / "Added Note.md").write_text("# Added\n\nSee [[Ana Ruiz]].\n")
    Engram(mem.settings).update()
    assert "Added Note.md" in {n.get("path") for n in index_of(vault)["nodes"]}
    path.unlink()
    Engram(mem.settings).update()
    assert index_of(vault) == json.loads(mem.graph_export("json").text)


def test_export_from_the_cli_as_json_and_graphml(
    run: EngramCli, mem: Engram, vault: Path, tmp_path: Path, xdg: dict[str, str]
) -> None:
    out = tmp_path / "g.graphml"
    assert json.loads(run(xdg, "graph", "export").stdout) == index_of(vault)
    run(xdg, "graph", "export", "--format", "graphml", "-o", str(out))
    import networkx as nx

    g = nx.read_graphml(out)
    assert set(g.nodes) == {n["id"] for n in index_of(vault)["nodes"]}
    assert g.number_of_edges() == len(
        {(e["source"], e["target"]) for e in index_of(vault)["edges"]}
    )


PERSON = """{
  "collapse-filter": false,
  "search": "",
  "colorGroups": [
    {
      "query": "path:Journal",
      "color": {
        "a": 1,
        "rgb": 5431473
      }
    }
  ],
  "showTags": true,
  "scale": 0.8716
}"""


def test_colours_preview_then_write_keeping_every_other_byte(mem: Engram, vault: Path) -> None:
    graph = vault / ".obsidian/graph.json"
    graph.write_text(PERSON)
    plan = mem.graph_colours()
    assert len(plan.added) == 10 and not plan.written and graph.read_text() == PERSON
    written = mem.graph_colours(write=True)
    assert written.written
    text = graph.read_text()
    cut = text.index(',\n    {\n      "query": "path:\\"Engram/')
    end = text.index("\n  ],\n", cut)
    assert text[:cut] + text[end:] == PERSON  # the person's bytes, all of them
    again = mem.graph_colours(write=True)
    assert not again.written and again.present == 10 and graph.read_text() == text


def test_colours_never_overwrite_a_file_that_changed_since_it_was_read(
    mem: Engram, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.graph import colours

    graph = vault / ".obsidian/graph.json"
    graph.write_text(PERSON)
    original = colours.add

    def obsidian_saves_meanwhile(text: str | None, groups: list) -> str:
        graph.write_text(PERSON.replace("0.8716", "1.2"))
        return original(text, groups)

    monkeypatch.setattr(colours, "add", obsidian_saves_meanwhile)
    with pytest.raises(ConflictError):
        mem.graph_colours(write=True)
    assert "1.2" in graph.read_text()


def test_the_daemon_defers_a_rebuild_that_comes_too_soon_then_writes_it(
    mem: Engram, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `defer` (the daemon), a file rebuilt t seconds ago is rebuilt again only 10 t
    later; the change in between is written by flush_due once that time has come."""
    import engram.service.graph_files as gf

    clock = [gf.monotonic() + 1000.0]  # past any rebuild the fixture's set-up made

    def tick() -> float:  # every reading of the clock is one second later
        clock[0] += 1.0
        return clock[0]

    monkeypatch.setattr(gf, "monotonic", tick)
    files = mem.graph_files
    files.defer = True
    (vault / "First.md").write_text("# First\n\nSee [[Ana Ruiz]].\n")
    mem.update()  # rebuilt: it "took" a second of this clock, so the next waits ~10
    assert "First.md" in {n.get("path") for n in index_of(vault)["nodes"]}
    assert files.due() is None
    (vault / "Second.md").write_text("# Second\n\nSee [[Kenji Sato]].\n")
    mem.update()
    assert "Second.md" not in {n.get("path") for n in index_of(vault)["nodes"]}  # deferred
    wait = files.due()
    assert wait is not None and 0 < wait <= 10
    assert files.flush_due() == []  # not yet
    clock[0] += 10
    assert files.due() == 0.0
    assert files.flush_due() == [str(vault / ".engram/graph-index/0000.json")]
    assert index_of(vault) == json.loads(mem.graph_export("json").text)
    assert files.due() is None


def test_a_graph_index_file_linked_out_of_the_vault_is_neither_read_nor_written(
    mem: Engram, vault: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A hostile `.engram/graph-index.json` symlink must not stop updates (fact rows are
    refreshed after the file) nor let Engram touch the file it points at."""
    outside = tmp_path / "outside.json"
    outside.write_text("not Engram's\n")
    link = vault / ".engram/graph-index.json"
    link.unlink()
    link.symlink_to(outside)
    fact = mem.fact_add("We decided to roast on Fridays")
    assert mem.fact_get(fact.id).id == fact.id
    (vault / "Added Note.md").write_text("# Added\n\nSee [[Ana Ruiz]].\n")
    report = mem.update()
    assert report.added == 1
    assert outside.read_text() == "not Engram's\n" and link.is_symlink()
    assert "escapes the vault" in caplog.text
