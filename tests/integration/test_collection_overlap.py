"""Collections never overlap: a folder that is, lies inside or holds a collection's folder is
refused wherever folders are registered; configs that overlap already are reported and graph
commands still find their one vault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from engram.errors import ConflictError
from engram.service import Engram
from engram.service.collections import covering, overlaps
from tests.conftest import TINY_VAULT, EngramCli, write_tree

# how the second folder is written, relative to the vault, and whether it overlaps it
SPELLINGS = [
    ("{vault}", "same"),
    ("{vault}/", "same"),
    ("{vault}/Projects/..", "same"),
    ("{link}", "same"),  # a symlink to the vault
    ("{vault}/Projects", "inside"),
    ("{link}/Projects", "inside"),
    ("{vault}/日本語", "inside"),
    ("{parent}", "contains"),
    ("{vault}/../vault2", None),  # a sibling whose name starts with the vault's
    ("{parent}/other", None),
]


@pytest.fixture
def places(tiny_vault: Path) -> dict[str, str]:
    parent = tiny_vault.parent
    (parent / "vault2").mkdir()
    (parent / "other").mkdir()
    link = parent / "link"
    link.symlink_to(tiny_vault, target_is_directory=True)
    return {"vault": str(tiny_vault), "parent": str(parent), "link": str(link)}


@pytest.mark.parametrize(("spelling", "relation"), SPELLINGS)
def test_collection_add_refuses_an_overlapping_folder(
    engram: Engram, places: dict[str, str], spelling: str, relation: str | None
) -> None:
    engram.collection_add(places["vault"], "notes")
    folder = spelling.format(**places)
    if relation is None:
        engram.collection_add(folder, "second")
        assert {c.name for c in engram.collection_list()} == {"notes", "second"}
        return
    with pytest.raises(ConflictError) as caught:
        engram.collection_add(folder, "second")
    message = str(caught.value)
    assert "'notes'" in message and places["vault"] in message  # names what is there
    assert "engram collection remove notes" in message  # and what to do
    assert [c.name for c in engram.collection_list()] == ["notes"]
    # the other registering paths refuse it the same way
    if relation != "same":
        with pytest.raises(ConflictError):
            engram.init_vault(folder, name="second", index=False)
        with pytest.raises(ConflictError):
            engram.vault_collection(folder)
    else:  # the same folder is the same collection: reused, never added again
        assert engram.vault_collection(folder) == "notes"
        assert engram.init_vault(folder, index=False).name == "notes"
    assert [c.name for c in engram.collection_list()] == ["notes"]


def test_cli_says_which_collection_holds_the_folder(
    run: EngramCli, xdg: dict[str, str], places: dict[str, str]
) -> None:
    run(xdg, "collection", "add", places["vault"], "--name", "help")
    again = run(xdg, "collection", "add", places["link"], "--name", "help2", ok=False)
    assert again.returncode != 0
    assert "collection 'help' already exists for this folder" in again.stderr
    assert "engram collection rename help" in again.stderr
    inner = run(xdg, "collection", "add", places["vault"] + "/Projects", ok=False)
    assert "lies inside collection 'help'" in inner.stderr
    listed = run(xdg, "collection", "list", "--json")
    assert [c["name"] for c in json.loads(listed.stdout)] == ["help"]


def _add_by_hand(config_file: Path, name: str, folder: Path) -> None:
    """What configs written before overlaps were refused (or edited by hand) hold."""
    raw = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    raw["collections"][name] = {"path": str(folder), "pattern": "**/*.md"}
    config_file.write_text(yaml.safe_dump(raw), encoding="utf-8")


def test_overlapping_config_is_reported_and_graph_picks_the_vault(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path
) -> None:
    vault = write_tree(tmp_path / "vault", TINY_VAULT)
    run(xdg, "init", str(vault), "--name", "help")
    config_file = Path(json.loads(run(xdg, "status", "--json").stdout)["config"])
    _add_by_hand(config_file, "help2", vault)
    _add_by_hand(config_file, "projects", vault / "Projects")
    run(xdg, "update")
    status = run(xdg, "status")
    assert "collections 'help' and 'help2' are the same folder" in status.stderr
    assert "collection 'projects' lies inside collection 'help'" in status.stderr
    assert len(json.loads(run(xdg, "status", "--json").stdout)["overlaps"]) == 2
    doctor = json.loads(run(xdg, "doctor", "--json", ok=False).stdout)
    warned = {c["name"]: c for c in doctor if c["status"] == "warn"}
    assert "engram collection remove help2" in warned["overlapping collection help2"]["fix"]
    assert "engram collection remove projects" in warned["overlapping collection projects"]["fix"]
    # graph commands used to fail with "several collections": the default vault holds them all
    backlinks = run(xdg, "graph", "backlinks", "Projects/Pricing.md", "--json")
    assert "Welcome.md" in backlinks.stdout
    # two vaults that do not overlap still need a choice
    _add_by_hand(config_file, "elsewhere", write_tree(tmp_path / "else", {"a.md": "# A\n"}))
    other = run(xdg, "graph", "backlinks", "Projects/Pricing.md", ok=False)
    assert "several collections" in other.stderr


def test_covering_and_overlaps_table() -> None:
    from engram.config import Collection

    def cols(*spec: tuple[str, str]) -> tuple[Collection, ...]:
        return tuple(Collection(n, Path(p)) for n, p in spec)

    assert covering(cols(("a", "/v"), ("b", "/v"))) == "a"
    assert covering(cols(("a", "/v"), ("b", "/v")), prefer="b") == "b"
    assert covering(cols(("a", "/v/x"), ("b", "/v")), prefer="a") == "b"
    assert covering(cols(("a", "/v"), ("b", "/w"))) is None
    assert covering(cols(("a", "/v"), ("b", "/v2"))) is None
    found = [(o.outer, o.inner, o.same) for o in overlaps(cols(("a", "/v/x"), ("b", "/v")))]
    assert found == [("b", "a", False)]
    assert overlaps(cols(("a", "/v"), ("b", "/v2"), ("c", "/w"))) == []
