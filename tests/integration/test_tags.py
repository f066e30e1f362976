"""Tags as Obsidian: every face that filters or counts by tag ignores case and folds nested
tags into their parents; `engram tags` lists them as the tag pane does; an index made before
tag keys existed is upgraded in place to what a new index holds."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram import config
from engram.cli import commands  # noqa: F401  (registers the commands)
from engram.cli.main import cli
from engram.errors import NotFoundError
from engram.index import verify
from engram.service import Engram
from engram.service.tags import TagCount, TagList
from engram.store.db import sqlite_module
from engram.store.filters import Filters
from tests.conftest import write_tree

NOTES: dict[str, str | bytes] = {
    "Plan.md": (
        "---\ntags: [Project, area/Business]\n---\n# Plan\n\n"
        "The plan. #project/alpha, see [[Deep]] and [[List]].\n"
    ),
    "Ops/Deep.md": "# Deep\n\nNotes. #PROJECT/Alpha/deep #projects #todo\n",
    "Ops/List.md": "---\ntags: todo, project/beta\n---\n# List\n\n#TODO twice #todo\n",
    "Code.md": "# Code\n\n```\n#project in a code block\n```\n\nand `#project` inline code\n",
    "Plain.md": "# Plain\n\nNo tags here, only #123 and a#b.\n",
}


@pytest.fixture
def tagged(engram: Engram, tmp_path: Path) -> Engram:
    """The facade over a vault whose tags differ in case and nest, as collection `v`."""
    engram.collection_add(str(write_tree(tmp_path / "vault", NOTES)), "v")
    engram.update()
    return engram


def paths(e: Engram, query: str = "", filters: Filters | None = None) -> set[str]:
    return {r.path for r in e.search(query, n=None, filters=filters)}


def test_a_tag_filter_ignores_case_and_takes_nested_tags(tagged: Engram) -> None:
    for typed, expected in (
        ("Project", {"Plan.md", "Ops/Deep.md", "Ops/List.md"}),
        ("#PROJECT/", {"Plan.md", "Ops/Deep.md", "Ops/List.md"}),
        ("project/ALPHA", {"Plan.md", "Ops/Deep.md"}),
        ("Projects", {"Ops/Deep.md"}),
        ("area", {"Plan.md"}),
        ("todo", {"Ops/Deep.md", "Ops/List.md"}),
        ("proj", set()),
        ("project/alpha/deep/x", set()),
    ):
        assert paths(tagged, f'tag:"{typed}"') == expected, typed
        assert paths(tagged, "", Filters(tags=(typed,))) == expected, typed  # HTTP filters
    assert paths(tagged, "tag:project tag:TODO") == {"Ops/Deep.md", "Ops/List.md"}
    assert tagged.status().tags == 7  # distinct tags: `TODO` and `todo` are one


@contextmanager
def fresh_index(tmp: Path, root: Path) -> Iterator[Engram]:
    """A new index of `root` as collection `v`, closed after."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp / "fresh")}
    e = Engram(config.resolve(env, index="fresh"))
    try:
        e.collection_add(str(root), "v")
        e.update()
        yield e
    finally:
        e.close()


def test_an_index_from_before_tag_keys_is_upgraded_to_what_a_new_one_holds(
    tagged: Engram, tmp_path: Path
) -> None:
    db_path = tagged.settings.db_path
    tagged.close()
    conn = sqlite_module().connect(db_path)  # the index as the last release left it
    with conn:
        for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
            conn.execute(f"DROP TRIGGER {trigger}")  # m020's, which read the key
        conn.execute("DROP INDEX tags_key")
        conn.execute("DROP TABLE graph_dirty")
        conn.execute("DROP TABLE graph_tag_names")
        conn.execute("DROP TABLE graph_files")
        conn.execute(
            "DELETE FROM _migrations WHERE name IN ('m020_graph_dirty', 'm021_graph_files')"
        )
        conn.execute("ALTER TABLE tags DROP COLUMN key")
        conn.execute("CREATE INDEX tags_tag ON tags (tag COLLATE NOCASE)")
        conn.execute("DELETE FROM _migrations WHERE name = 'm018_tag_keys'")
    conn.close()
    upgraded = Engram(tagged.settings)
    try:
        with fresh_index(tmp_path, tmp_path / "vault") as fresh:
            drift = verify.compare(
                verify.snapshot(upgraded.db.conn, "v"), verify.snapshot(fresh.db.conn, "v")
            )
            assert not drift, "\n".join(d.describe() for d in drift)
        assert upgraded.tags() == EXPECTED
        assert paths(upgraded, "tag:PROJECT/alpha") == {"Plan.md", "Ops/Deep.md"}
    finally:
        upgraded.close()


def test_graph_nodes_and_themes_take_a_tag_in_any_case_as_one(tagged: Engram) -> None:
    graph = json.loads(tagged.graph_export().text or "{}")
    tag_nodes = sorted(n["id"] for n in graph["nodes"] if n["kind"] == "tag")
    assert tag_nodes == [
        "tag:area/Business",
        "tag:project",
        "tag:project/Alpha",
        "tag:project/Alpha/deep",
        "tag:project/beta",
        "tag:projects",
        "tag:todo",
    ]
    [theme] = tagged.themes()
    counts = {t.tag: t.notes for t in theme.tags}
    assert counts["todo"] == 2 and "TODO" not in counts


def test_facts_are_filtered_by_tag_in_any_case_and_by_parent(mem: Engram) -> None:
    fact = mem.fact_add("We price by usage.", "decision", tags=["Pricing/Tiers"])
    for tag in ("pricing", "PRICING/tiers", "#Pricing"):
        assert [f.id for f in mem.fact_list(tag=tag)] == [fact.id], tag
        assert [h.fact.id for h in mem.recall("usage", tags=[tag]).results] == [fact.id], tag
    assert mem.fact_list(tag="pric") == []
    assert mem.fact_list(tag="pricing/tier") == []


def test_tags_from_the_fact_writer_are_one_per_tag_whatever_the_case(mem: Engram) -> None:
    fact = mem.fact_add("Ship on Fridays.", "decision", tags=["Release", "release", "#RELEASE"])
    assert fact.tags == ("Release",)


# --- engram tags ------------------------------------------------------------------------------

EXPECTED = TagList(
    (
        TagCount("area", 1),
        TagCount("area/Business", 1),
        TagCount("project", 3),  # Plan has `Project` and `project/alpha`: counted once
        TagCount("project/Alpha", 2),  # one note each way: Ops/Deep.md comes first by path
        TagCount("project/Alpha/deep", 1),
        TagCount("project/beta", 1),
        TagCount("projects", 1),
        TagCount("todo", 2),
    ),
    3,
)


def test_the_tag_list_is_the_tag_pane(tagged: Engram) -> None:
    assert tagged.tags() == EXPECTED
    assert tagged.tags(["v"]) == EXPECTED
    by_count = [t.name for t in tagged.tags(sort="count").tags]
    assert by_count[:2] == ["project", "project/Alpha"] and by_count[-1] == "projects"


def test_each_count_is_what_a_tag_filter_finds_in_any_case(tagged: Engram) -> None:
    for t in tagged.tags().tags:
        for typed in (t.name, t.name.upper(), f"#{t.name.lower()}/"):
            assert len(paths(tagged, f'tag:"{typed}"')) == t.count, typed


def test_an_edit_changes_the_counts_and_spellings_as_a_new_index_would(
    tagged: Engram, tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    (root / "More.md").write_text("# More\n\n#Todo #TODO/Later #Area\n", encoding="utf-8")
    (root / "Extra.md").write_text("# Extra\n\n#Todo\n", encoding="utf-8")
    (root / "Ops/Deep.md").unlink()
    tagged.update()
    names = {t.name: t.count for t in tagged.tags().tags}
    assert names["Todo"] == 3 and names["Todo/Later"] == 1 and names["Area"] == 2
    assert "projects" not in names and names["project"] == 2
    with fresh_index(tmp_path, root) as fresh:
        assert fresh.tags() == tagged.tags()


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["tags", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_engram_tags_prints_the_pane_and_json(tagged: Engram) -> None:
    code, out = run()
    assert code == 0
    assert out.splitlines() == [
        "area        1",
        "  Business  1",
        "project     3",
        "  Alpha     2",
        "    deep    1",
        "  beta      1",
        "projects    1",
        "todo        2",
    ]
    code, out = run("--json", "--sort", "count", "-c", "v")
    data = json.loads(out)
    assert code == 0 and data["notes"] == 3
    assert data["tags"][0] == {"name": "project", "count": 3}
    assert {t["name"] for t in data["tags"]} == {t.name for t in EXPECTED.tags}


def test_engram_tags_with_no_tags_and_an_unknown_collection(engram: Engram, tmp_path: Path) -> None:
    engram.collection_add(str(write_tree(tmp_path / "empty", {"a.md": "# A\n"})), "v")
    engram.update()
    assert run() == (0, "no tags\n")
    with pytest.raises(NotFoundError, match="no collection named 'nope'"):
        engram.tags(["nope"])
