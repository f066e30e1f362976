"""Globs, ignore rules and the folder walk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.vault.scan import glob_regex, is_ignored, matches, scan


@pytest.mark.parametrize(
    ("pattern", "path", "ok"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("**/*.md", "a.txt", False),
        ("*.md", "x/a.md", False),
        ("notes/**", "notes/a/b.md", True),
        ("**/*.{md,txt}", "a/b.txt", True),
        ("**/[ab].md", "z/a.md", True),
        ("**/[!ab].md", "z/a.md", False),
        ("**/?.md", "q/x.md", True),
        ("**/*.MD", "a.md", True),
        ("Daily/2024-*.md", "Daily/2024-01-01.md", True),
    ],
)
def test_glob(pattern: str, path: str, ok: bool) -> None:
    assert matches(pattern, path) is ok


def test_ignore_matches_folders_and_files() -> None:
    assert is_ignored("Archive/old/x.md", ("Archive",))
    assert is_ignored("Archive/old/x.md", ("Archive/**",))
    assert is_ignored("a/draft-1.md", ("**/draft-*",))
    assert not is_ignored("Archived.md", ("Archive",))


def test_scan_skips_hidden_and_tool_folders_and_survives_loops(tmp_path: Path) -> None:
    for rel in [
        "a.md",
        "sub/b.md",
        ".obsidian/c.md",
        ".trash/d.md",
        "node_modules/e.md",
        ".hidden.md",
        "x.txt",
        "Archive/f.md",
    ]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    os.symlink(tmp_path, tmp_path / "sub" / "loop")
    os.symlink(tmp_path / "missing", tmp_path / "dangling.md")
    warnings: list[tuple[str, str]] = []
    found = [
        f.rel for f in scan(tmp_path, "**/*.md", ("Archive",), lambda r, m: warnings.append((r, m)))
    ]
    assert found == ["a.md", "sub/b.md"]
    # symlinks are never followed (so a loop cannot loop); inside the root they are quiet
    assert warnings == []


def test_symlinks_are_indexed_once_under_the_real_path_and_never_out_of_the_root(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "vault", tmp_path / "outside"
    (root / "notes").mkdir(parents=True)
    outside.mkdir()
    (root / "notes" / "real.md").write_text("x")
    (outside / "secret.md").write_text("secret")
    os.symlink(root / "notes" / "real.md", root / "alias.md")  # inside -> inside
    os.symlink(root / "notes", root / "mirror")  # a folder inside -> inside
    os.symlink(outside / "secret.md", root / "secret.md")  # file out of the root
    os.symlink(outside, root / "elsewhere")  # folder out of the root
    os.symlink("/etc/passwd", root / "passwd.md")
    warnings: list[tuple[str, str]] = []
    found = [f.rel for f in scan(root, "**/*.md", (), lambda r, m: warnings.append((r, m)))]
    assert found == ["notes/real.md"]
    assert sorted(r for r, _ in warnings) == ["elsewhere", "passwd.md", "secret.md"]
    assert all("outside the collection" in m for _, m in warnings)


@given(st.lists(st.text(alphabet="aZé./-_ ", min_size=1, max_size=8), min_size=1, max_size=4))
def test_a_suffix_glob_matches_as_its_regular_expression_does(parts: list[str]) -> None:
    """`**/*.md`, the default mask, is tested by the name's ending: the same answers."""
    rel = "/".join(parts)
    for pattern in ("**/*.md", "**/*.MD", "/**/*.canvas"):
        assert matches(pattern, rel) is (glob_regex(pattern).match(rel) is not None)


def test_one_walk_lists_the_notes_and_every_file_links_resolve_against(tmp_path: Path) -> None:
    """A full update walks the folder once: the files it adds to `every` are exactly the
    vault's files as links see them (index/links.vault_files), whatever the mask and the
    ignore globs say, and the notes it yields are the mask's."""
    from engram.index.links import vault_files

    root = tmp_path / "v"
    for rel in (
        "a.md", "img.png", "log.jsonl", "Sub/b.MD", "Sub/c.pdf", "skip/d.md", "skip/deep/e.png",
        ".obsidian/app.json", ".hidden.md", "node_modules/x.md", "Sub/.dot/f.md", "Ü/ß.md",
    ):  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (tmp_path / "outside.md").write_text("x")
    os.symlink(tmp_path / "outside.md", root / "link.md")
    os.symlink(root / "Sub", root / "loop")
    (root / b"bad\xff.md".decode("utf-8", "surrogateescape")).write_text("x")
    every: set[str] = set()
    notes = [f.rel for f in scan(root, "**/*.md", ("skip/",), None, every)]
    assert every == vault_files(root)
    assert notes == ["Sub/b.MD", "a.md", "Ü/ß.md"]
