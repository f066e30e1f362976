"""`get` and `multi-get` take a note's title, alias, file name or `[[wikilink]]` (with
`#heading` / `#^block`), resolved as the graph commands resolve them, with "did you mean"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.errors import NotFoundError
from engram.service import Engram
from tests.conftest import EngramCli, write_tree

NOTES = {
    "Home.md": "---\naliases: [Index, Start]\n---\n# Home\n\nSee [[Canvas]].\n",
    "Guides/Canvas.md": (
        "# Canvas\n\nA canvas is a board.\n\n## Cards\n\nCards hold text.\n\n"
        "### Card colours\n\nSix colours.\n\n## Groups\n\nGroups hold cards.\nThey nest.\n"
        "Groups keep cards together. ^groups\n\n```\n## Not a heading\n```\n"
    ),
    "Guides/Command palette.md": "---\ntitle: Command Palette\n---\nOpen it with Mod+P.\n",
    "Old/Canvas.md": "# Canvas (old)\n\nThe old canvas page.\n",  # a second `Canvas`
    "Plans/Sync.md": "---\naliases: [Syncing]\n---\n# Sync plan\n\nPhone and laptop.\n",
    "Plans/Trip.md": "---\naliases: [Syncing]\n---\n# Trip\n\nLisbon.\n",  # same alias
}


@pytest.fixture
def named(engram: Engram, tmp_path: Path) -> Engram:
    engram.init_vault(str(write_tree(tmp_path / "help", NOTES)), template=False)
    return engram


def test_every_unique_title_alias_and_name_gets_its_note(named: Engram) -> None:
    """What a person may call each note, wherever exactly one note answers to it."""
    conn = named.db.conn
    rows = conn.execute("SELECT path, title, aliases FROM documents").fetchall()
    labels: dict[str, set[str]] = {}
    for path, title, aliases in rows:
        for label in (title, Path(path).stem, *json.loads(aliases or "[]")):
            labels.setdefault(label.lower(), set()).add(path)
    checked = 0
    for label, paths in labels.items():
        if len(paths) != 1:
            continue
        (path,) = paths
        for ref in (label, label.upper(), f"[[{label}]]", f"[[{label}|shown]]", f"![[{label}]]"):
            assert named.get(ref).path == path, ref
            checked += 1
        assert [d.path for d in named.multi_get(f"{label}, [[{label}]]")] == [path]
    assert checked >= 30


def test_a_heading_or_block_gives_its_lines(named: Engram) -> None:
    cards = named.get("[[Guides/Canvas#Cards]]")
    assert cards.text.split("\n")[0] == "## Cards"
    assert "Six colours." in cards.text and "## Groups" not in cards.text  # subsection kept
    nested = named.get("[[Guides/Canvas#Cards#Card colours]]")
    assert nested.text.strip() == "### Card colours\n\nSix colours."
    groups = named.get("[[Guides/Canvas#groups]]")  # case and punctuation as Obsidian
    assert groups.text.startswith("## Groups") and "Not a heading" in groups.text
    block = named.get("[[Guides/Canvas#^groups]]")
    assert block.text == "Groups hold cards.\nThey nest.\nGroups keep cards together. ^groups"
    assert block.from_line == cards.from_line + 10
    two = named.get("[[Guides/Canvas#Cards]]", max_lines=2)
    assert two.text == "## Cards\n"
    with pytest.raises(NotFoundError, match="no heading 'Nope'"):
        named.get("[[Guides/Canvas#Nope]]")
    with pytest.raises(NotFoundError, match="no block"):
        named.get("[[Guides/Canvas#^nope]]")


def test_ambiguous_and_unknown_names_suggest(named: Engram) -> None:
    with pytest.raises(NotFoundError) as several:
        named.get("Syncing")
    assert "several notes match 'Syncing'" in str(several.value)
    assert {"help/Plans/Sync.md", "help/Plans/Trip.md"} <= set(several.value.suggestions)
    with pytest.raises(NotFoundError) as typo:
        named.get("[[Comand Palete]]")
    assert "no indexed document matches 'Comand Palete'" in str(typo.value)
    assert "help/Guides/Command palette.md" in typo.value.suggestions
    assert named.get("Guides/Canvas").path == "Guides/Canvas.md"  # a path still wins
    assert named.get("Canvas (old)").path == "Old/Canvas.md"  # its title


def test_cli_get_and_multi_get_by_name(run: EngramCli, xdg: dict[str, str], tmp_path: Path) -> None:
    vault = write_tree(tmp_path / "help", NOTES)
    run(xdg, "init", str(vault))
    out = run(xdg, "get", "Command Palette").stdout
    assert "Open it with Mod+P." in out
    section = run(xdg, "get", "[[Guides/Canvas#Card colours]]").stdout
    assert section.strip() == "### Card colours\n\nSix colours."
    missing = run(xdg, "get", "Comand palete", ok=False)
    assert (
        missing.returncode != 0 and "did you mean: help/Guides/Command palette.md" in missing.stderr
    )
    both = json.loads(run(xdg, "multi-get", "Start, [[Command Palette]]", "--json").stdout)
    assert [d["path"] for d in both] == ["Home.md", "Guides/Command palette.md"]
