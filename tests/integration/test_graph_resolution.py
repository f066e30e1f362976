"""Link resolution through the real indexer and index: one fixture per Obsidian rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.service import Engram
from tests.conftest import write_tree

RULES: dict[str, str | bytes] = {
    "Note.md": "# Note at the root\n",
    "a/Note.md": "# A\n\n## Sub: one [x]\n\nA block line ^blk-1\n",
    "a/b/Note.md": "# AB\n",
    "ab/Topic.md": "# ab\n",
    "c/Topic.md": "# c\n",
    "d/Topic.md": "# d\n",
    "d/src.md": "Same folder: [[Topic]]. Up one: [[../Note]].\n",
    "Aliased.md": "---\naliases: [AL, Also Known]\n---\n# Aliased\n",
    "Sub/My Doc.md": "# My Doc\n",
    "Log.md": "# Log\n",
    "attachments/pic.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "Links.md": (
        "# Links\n\n"
        "## Local heading\n\n"
        "exact [[Note]]\n"  # 5
        "suffix [[b/Note]]\n"  # 6
        "heading [[a/Note#Sub one x]] and [[a/Note#sub: ONE x]]\n"  # 7
        "missing heading [[a/Note#Missing]]\n"  # 8
        "block [[a/Note#^blk-1]] missing block [[a/Note#^nope]]\n"  # 9
        "shortest [[Topic]]\n"  # 10
        "alias [[AL]] and name [[Aliased]]\n"  # 11
        "\n| col | link |\n|---|---|\n| x | [[a/Note\\|shown]] |\n\n"  # 15
        "markdown [text](My%20Doc.md) and [t](<Sub/My Doc.md#My Doc>)\n"  # 17
        "code `[[InCode]]` here\n"  # 18
        "```\n[[Fenced]]\n```\n"  # 19-21
        "attachment ![[pic.png]] missing ![[missing.png]] no extension [[pic]]\n"  # 22
        "case [[LOG]] [[log.MD]] self [[#Local heading]] [[#Nope]]\n"  # 23
    ),
}


@pytest.fixture
def rules(engram: Engram, tmp_path: Path) -> Engram:
    """The RULES vault indexed as collection `v`."""
    engram.collection_add(str(write_tree(tmp_path / "rules", RULES)), "v")
    engram.update()
    return engram


def outgoing(e: Engram, note: str) -> list[tuple[int, str, str | None, bool | None, bool | None]]:
    """(line, target as written, resolved path, heading found, block found) per link."""
    return [
        (lk.line, lk.target, lk.path, lk.heading_found, lk.block_found)
        for lk in e.links(note).links
    ]


def test_each_obsidian_rule(rules: Engram) -> None:
    assert outgoing(rules, "Links.md") == [
        (5, "Note", "Note.md", None, None),  # a whole-path match wins over a/Note.md
        (6, "b/Note", "a/b/Note.md", None, None),  # a path suffix, whole folder names
        (7, "a/Note", "a/Note.md", True, None),  # heading, Obsidian-normalised
        (7, "a/Note", "a/Note.md", True, None),  # punctuation and case ignored
        (8, "a/Note", "a/Note.md", False, None),  # the file resolves, the heading does not
        (9, "a/Note", "a/Note.md", None, True),
        (9, "a/Note", "a/Note.md", None, False),
        (10, "Topic", "c/Topic.md", None, None),  # shortest path; equal length: a-z
        (11, "AL", None, None, None),  # an alias is not a link target in Obsidian
        (11, "Aliased", "Aliased.md", None, None),
        (15, "a/Note", "a/Note.md", None, None),  # `\|` inside a table
        (17, "My Doc.md", "Sub/My Doc.md", None, None),  # URL-decoded, then vault-wide
        (17, "Sub/My Doc.md", "Sub/My Doc.md", True, None),  # <angle> destination + heading
        (22, "pic.png", "attachments/pic.png", None, None),  # an attachment is a file too
        (22, "missing.png", None, None, None),
        (22, "pic", None, None, None),  # only .md may be left out
        (23, "LOG", "Log.md", None, None),  # names ignore case
        (23, "log.MD", "Log.md", None, None),
        (23, "", "Links.md", True, None),  # [[#heading]] links to the note itself
        (23, "", "Links.md", False, None),
    ]


def test_table_link_keeps_its_display_text_and_code_links_are_ignored(rules: Engram) -> None:
    links = rules.links("Links.md").links
    assert [lk.display for lk in links if lk.line == 15] == ["shown"]
    assert not {"InCode", "Fenced"} & {lk.target for lk in links}


def test_same_folder_and_relative_rules(rules: Engram) -> None:
    assert outgoing(rules, "d/src.md") == [
        (1, "Topic", "d/Topic.md", None, None),  # the source's own folder wins
        (1, "../Note", "Note.md", None, None),  # ../ is relative to the source
    ]


def test_backlinks_attachments_and_unresolved(rules: Engram) -> None:
    back = rules.backlinks("a/Note").links
    assert [(b.path, b.line) for b in back] == [
        ("Links.md", 7),
        ("Links.md", 7),
        ("Links.md", 8),
        ("Links.md", 9),
        ("Links.md", 9),
        ("Links.md", 15),
    ]
    assert back[0].context.startswith("heading [[a/Note#Sub one x]]")
    shown = {(u.target, u.reason, u.alias_of) for u in rules.unresolved()}
    assert shown == {
        ("AL", "file", "Aliased.md"),
        ("missing.png", "file", None),
        ("pic", "file", None),
    }
    with_subpaths = {
        (u.target, u.heading, u.block, u.reason) for u in rules.unresolved(subpaths=True)
    }
    assert with_subpaths - {(t, None, None, r) for t, r, _ in shown} == {
        ("a/Note", "Missing", None, "heading"),
        ("a/Note", None, "nope", "block"),
        ("", "Nope", None, "heading"),
    }


def test_human_input_accepts_aliases(rules: Engram) -> None:
    assert rules.backlinks("Also Known").note.path == "Aliased.md"
    assert [b.target for b in rules.backlinks("AL").links] == ["Aliased"]


def test_links_to_files_outside_the_mask_or_ignored_still_resolve(
    engram: Engram, tmp_path: Path
) -> None:
    root = write_tree(
        tmp_path / "v2",
        {
            "Home.md": "[[Archive/Old]] [[Draft]] [[Gone]]\n",
            "Archive/Old.md": "# old\n",
            "Draft.txt.md": "# draft\n",
            "Draft.md": "# draft note\n",
        },
    )
    engram.collection_add(str(root), "v2", ignore=("Archive",))
    engram.update()
    links = engram.links("Home", "v2").links
    assert [(lk.path, lk.note) for lk in links] == [
        ("Archive/Old.md", False),  # a file Obsidian sees, not indexed here
        ("Draft.md", True),
        (None, False),
    ]
    assert [u.target for u in engram.unresolved("v2")] == ["Gone"]
