"""`engram graph ...`: every command's JSON shape, human output and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engram.cli import commands  # noqa: F401  (registers the commands)
from engram.cli.main import cli
from engram.service import Engram

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"
LINK_KEYS = {"path", "title", "line", "context", "target", "kind", "embed", "resolved"}


@pytest.fixture
def example(engram: Engram) -> Engram:
    """The example vault indexed as collection `brewline`."""
    engram.collection_add(str(EXAMPLE), "brewline")
    engram.update()
    return engram


def run_json(*args: str) -> Any:
    result = CliRunner().invoke(cli, ["graph", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_backlinks_and_links_print_arrays_of_links(example: Engram) -> None:
    back = run_json("backlinks", "People/Ana Ruiz")
    assert isinstance(back, list) and len(back) == 3
    assert set(back[0]) >= LINK_KEYS
    assert (back[1]["path"], back[1]["line"], back[1]["kind"]) == (
        "Meetings/2024-05-06 Weekly Sync.md",
        4,
        "frontmatter",
    )
    assert "[[People/Ana Ruiz]]" in back[1]["context"]
    out = run_json("links", "Projects/Mobile App.md", "-c", "brewline")
    assert [(lk["path"], lk["line"]) for lk in out] == [
        ("Reference/Payment Providers.md", 12),
        ("Projects/Pricing Model.md", 17),
        ("People/Kenji Sato.md", 19),
    ]
    assert out[1]["embed"] is True and out[1]["heading"] == "Decision"
    assert out[1]["headingFound"] is True


def test_unresolved_orphans_neighbors_path(example: Engram) -> None:
    stubs = run_json("unresolved")
    assert stubs == [
        {
            "source": "Meetings/2024-05-06 Weekly Sync.md",
            "target": "Roasters",
            "line": 20,
            "context": "[[Roasters]] asked for a 12-month volume commitment.",
            "kind": "wikilink",
            "embed": False,
            "heading": None,
            "block": None,
            "reason": "file",
            "aliasOf": "Roasting Partners.md",
        }
    ]
    assert run_json("orphans") == [{"path": "Daily/2024-05-07.md", "title": "2024-05-07"}]
    near = run_json("neighbors", "Home", "--depth", "2", "--direction", "out")
    assert {n["distance"] for n in near} == {1, 2}
    assert set(near[0]) == {"path", "title", "distance", "direction"}
    route = run_json("path", "Cupping Protocol", "Payment Providers")
    assert route["found"] and route["length"] == 4
    assert [s["direction"] for s in route["steps"]] == [None, "in", "in", "out", "out"]


def test_rank_and_themes(example: Engram) -> None:
    ranking = run_json("rank", "--by", "bridging", "-n", "2")
    assert ranking["by"] == "bridging" and ranking["method"] == "exact betweenness"
    assert [n["rank"] for n in ranking["notes"]] == [1, 2]
    about = run_json("rank", "--about", "pricing tiers")
    assert about["about"] == "pricing tiers" and about["notes"][0]["hit"] is True
    themes = run_json("themes")
    assert set(themes[0]) == {"id", "label", "size", "notes", "tags"}
    assert themes[0]["tags"][0].keys() == {"tag", "notes"}


def test_human_output(example: Engram) -> None:
    result = CliRunner().invoke(cli, ["graph", "backlinks", "Kenji"])
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == "People/Kenji Sato.md: 3 backlinks"
    assert "  Projects/Mobile App.md:19  Design lead: [[People/Kenji Sato]]." in result.output
    result = CliRunner().invoke(cli, ["graph", "unresolved"])
    assert "[[Roasters]]" in result.output and "alias of Roasting Partners.md" in result.output
    result = CliRunner().invoke(cli, ["graph", "links", "Projects/Mobile App.md"])
    assert result.output == (
        "Projects/Mobile App.md: 3 links\n"
        "  12: [[Reference/Payment Providers]] -> Reference/Payment Providers.md\n"
        "  17: [[Projects/Pricing Model#Decision]] -> Projects/Pricing Model.md\n"
        "  19: [[People/Kenji Sato]] -> People/Kenji Sato.md\n"
    )


@pytest.mark.slow  # a process of its own, to see what it imports
def test_link_listings_leave_the_graph_library_unloaded(
    example: Engram, xdg: dict[str, str]
) -> None:
    """backlinks, links and unresolved read stored links and build no graph, so networkx (a
    quarter of a second to import) stays out of them."""
    code = (
        "import sys\n"
        "from engram.cli.main import main\n"
        "for args in (['backlinks', 'Kenji'], ['links', 'Home'], ['unresolved']):\n"
        "    assert main(['graph', *args, '--json']) == 0\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **xdg},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stderr.split())
    assert "engram.graph.links" in loaded  # the check looks at the right process
    assert "networkx" not in loaded


def test_real_process_answers_and_explains_mistakes(
    example: Engram, xdg: dict[str, str], tmp_path: Path
) -> None:
    env = {**os.environ, **xdg, "NO_COLOR": "1"}

    def engram(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "engram", "graph", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    ok = engram("backlinks", "Roasters", "--json")  # an alias names the note
    assert ok.returncode == 0, ok.stderr
    assert [b["path"] for b in json.loads(ok.stdout)] == ["Home.md", "People/Kenji Sato.md"]
    typo = engram("neighbors", "Pricng Modle")
    assert typo.returncode == 1
    assert "no note matches 'Pricng Modle'" in typo.stderr
    assert "did you mean: Projects/Pricing Model.md" in typo.stderr
    example.collection_add(str(tmp_path), "other")
    several = engram("orphans")
    assert several.returncode == 1
    assert "choose one with -c/--collection" in several.stderr
    assert "brewline, other" in several.stderr
