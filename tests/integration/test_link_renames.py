"""A renamed note keeps its backlinks, whichever way the rename reaches the index (issue 15).

The linking note sorts before the note's new path in each case, so it is indexed first: its
link resolves to a path whose note the update has not stored yet.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engram.service import Engram
from tests.conftest import write_tree


def via_update(e: Engram, root: Path, old: str, new: str, linker: str, text: str) -> None:
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    (root / old).rename(root / new)
    (root / linker).write_text(text, encoding="utf-8")
    e.update()


def via_watcher(e: Engram, root: Path, old: str, new: str, linker: str, text: str) -> None:
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    (root / old).rename(root / new)
    (root / linker).write_text(text, encoding="utf-8")
    e.update_changed("v", [old, new, linker])


Rename = Callable[[Engram, Path, str, str, str, str], None]


@pytest.mark.parametrize("rename", [via_update, via_watcher])
@pytest.mark.parametrize(
    ("old", "new", "linker", "text"),
    [
        ("A/Target.md", "Z/Target2.md", "M/linker.md", "see [[Z/Target2]]\n"),
        (
            "Projects/Pricing Model.md",
            "Projects/Pricing Plan.md",
            "Home.md",
            "see [[Pricing Plan]] and [[Pricing Plan#Tiers]]\n",
        ),
    ],
)
def test_a_renamed_note_keeps_its_backlinks(
    engram: Engram, tmp_path: Path, rename: Rename, old: str, new: str, linker: str, text: str
) -> None:
    root = write_tree(tmp_path / "v", {old: "# Target\n\n## Tiers\n", linker: "see [[A/Target]]\n"})
    engram.collection_add(str(root), "v")
    engram.update()
    rename(engram, root, old, new, linker, text)
    backlinks = engram.backlinks(new).links
    assert {b.path for b in backlinks} == {linker}
    assert len(backlinks) == text.count("[[")
    assert all(b.heading_found in (None, True) for b in engram.links(linker).links)


def test_note_move_keeps_backlinks(engram: Engram, tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "v",
        {
            "Projects/Pricing Model.md": "# Pricing Model\n\n## Tiers\n",
            "Home.md": "[[Pricing Model]], [[Projects/Pricing Model#Tiers|tiers]]\n",
        },
    )
    engram.collection_add(str(root), "v")
    engram.update()
    change = engram.note_move("Projects/Pricing Model.md", "Projects/Pricing Plan.md")
    assert change.links_rewritten == 2
    backlinks = engram.backlinks("Projects/Pricing Plan.md").links
    assert [(b.path, b.heading_found) for b in backlinks] == [("Home.md", None), ("Home.md", True)]
    assert engram.unresolved() == []
