"""Resolution follows the vault as notes are added, renamed, edited and deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.index import links as resolution
from engram.service import Engram
from tests.conftest import write_tree


@pytest.fixture
def vault(engram: Engram, tmp_path: Path) -> tuple[Engram, Path]:
    """A small vault indexed as collection `v`."""
    root = write_tree(
        tmp_path / "v",
        {
            "A.md": "Dangling [[B]] and [[B#Plan]].\n",
            "x/src.md": "[[Topic]] ![[late.png]]\n",
            "c/Topic.md": "# c\n",
        },
    )
    engram.collection_add(str(root), "v")
    engram.update()
    return engram, root


def targets(e: Engram, note: str) -> list[str | None]:
    return [lk.path for lk in e.links(note).links]


@pytest.mark.parametrize("watcher", [False, True])
def test_a_new_note_resolves_old_dangling_links(vault: tuple[Engram, Path], watcher: bool) -> None:
    e, root = vault
    assert [u.target for u in e.unresolved()] == ["B", "B", "late.png"]
    (root / "B.md").write_text("# B\n\n## Plan\n", encoding="utf-8")
    e.update(only_paths={"v": {"B.md"}} if watcher else None)
    assert targets(e, "A") == ["B.md", "B.md"]
    assert [lk.heading_found for lk in e.links("A").links] == [None, True]
    assert [(b.path, b.line) for b in e.backlinks("B").links] == [("A.md", 1), ("A.md", 1)]
    assert [u.target for u in e.unresolved()] == ["late.png"]


def test_a_closer_file_takes_over_and_attachments_count(vault: tuple[Engram, Path]) -> None:
    e, root = vault
    assert targets(e, "x/src") == ["c/Topic.md", None]
    write_tree(root, {"x/Topic.md": "# x\n", "late.png": b"\x89PNG\r\n\x1a\n"})
    e.update()
    assert targets(e, "x/src") == ["x/Topic.md", "late.png"]
    assert e.backlinks("c/Topic").links == ()


def test_rename_moves_links_and_delete_leaves_stubs(vault: tuple[Engram, Path]) -> None:
    e, root = vault
    write_tree(root, {"B.md": "# B\n\n## Plan\n", "Other.md": "[[C]]\n"})
    e.update()
    assert len(e.backlinks("B").links) == 2
    (root / "B.md").rename(root / "C.md")
    report = e.update()
    assert report.renamed == 1
    assert targets(e, "A") == [None, None]  # [[B]] now dangles, as in Obsidian
    assert [b.path for b in e.backlinks("C").links] == ["Other.md"]
    (root / "C.md").unlink()
    e.update()
    assert targets(e, "Other") == [None]
    assert {u.target for u in e.unresolved()} == {"B", "C", "late.png"}


def test_watcher_rename_with_both_paths(vault: tuple[Engram, Path]) -> None:
    e, root = vault
    write_tree(root, {"B.md": "# B\n"})
    e.update()
    (root / "B.md").rename(root / "C.md")
    e.update(only_paths={"v": {"B.md", "C.md"}})
    assert targets(e, "A") == [None, None]
    assert e.backlinks("C").links == ()


def test_heading_edits_revalidate_links_to_the_note(vault: tuple[Engram, Path]) -> None:
    e, root = vault
    write_tree(root, {"B.md": "# B\n\n## Plan\n"})
    e.update()
    assert [lk.heading_found for lk in e.links("A").links] == [None, True]
    write_tree(root, {"B.md": "# B\n\n## Something else\n"})
    e.update(only_paths={"v": {"B.md"}})
    assert [lk.heading_found for lk in e.links("A").links] == [None, False]


def test_graph_is_cached_until_the_index_changes(vault: tuple[Engram, Path]) -> None:
    e, root = vault
    first = e.graph.vault_graph(None)[1]
    assert e.graph.vault_graph(None)[1] is first
    e.update()  # nothing changed: same graph
    assert e.graph.vault_graph(None)[1] is first
    write_tree(root, {"B.md": "# B\n"})
    e.update()
    second = e.graph.vault_graph(None)[1]
    assert second is not first
    assert [n.path for n in e.neighbors("B").neighbors] == ["A.md"]


def test_links_stored_before_resolution_are_resolved_on_first_use(
    vault: tuple[Engram, Path],
) -> None:
    e, _ = vault
    before = resolution.generation(e.db.conn)
    with e.db.write() as conn:  # as an index built before the m003 migration looks
        conn.execute("UPDATE links SET key = NULL, resolved_path = NULL, resolved_doc_id = NULL")
        conn.execute("DELETE FROM vault_files")
    assert targets(e, "x/src") == ["c/Topic.md", None]
    assert resolution.generation(e.db.conn) > before  # links changed: the graph is rebuilt


def test_removed_collection_forgets_its_files(vault: tuple[Engram, Path], tmp_path: Path) -> None:
    e, _ = vault
    other = write_tree(tmp_path / "w", {"N.md": "[[M]]\n", "M.md": "# m\n"})
    e.collection_add(str(other), "w")
    e.update()
    e.collection_remove("v")
    e.update()
    rows = e.db.conn.execute("SELECT DISTINCT collection FROM vault_files").fetchall()
    assert [r[0] for r in rows] == ["w"]
    assert targets(e, "N") == ["M.md"]


def test_a_watcher_update_on_a_renamed_collection_lists_the_whole_folder(
    vault: tuple[Engram, Path],
) -> None:
    e, root = vault
    e.collection_rename("v", "renamed")
    write_tree(root, {"B.md": "[[Topic]]\n"})
    e.update(only_paths={"renamed": {"B.md"}})
    assert targets(e, "B") == ["c/Topic.md"]  # c/Topic.md was not among the paths given
    assert [b.path for b in e.backlinks("B").links] == ["A.md", "A.md"]


def test_undecodable_file_names_are_skipped(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "odd", {"ok.png": b"x", "sub/a.md": "# a\n"})
    (root / b"bad\xff.png".decode("utf-8", "surrogateescape")).write_bytes(b"x")
    assert resolution.vault_files(root) == {"ok.png", "sub/a.md"}


def test_a_note_indexed_again_gets_the_links_already_pointing_at_its_file(
    vault: tuple[Engram, Path],
) -> None:
    e, root = vault
    write_tree(root, {"B.md": "# B\n\n## Plan\n"})
    e.update()
    (root / "B.md").write_bytes(b"\x00 binary for a while")  # skipped: a file, not a note
    e.update()
    assert targets(e, "A") == ["B.md", "B.md"]
    (root / "B.md").write_text("# B\n\n## Plan\n", encoding="utf-8")
    e.update()
    assert [(b.path, b.line) for b in e.backlinks("B").links] == [("A.md", 1), ("A.md", 1)]
    assert [lk.heading_found for lk in e.links("A").links] == [None, True]


def test_an_interrupted_update_leaves_links_for_the_next_one(
    engram: Engram, tmp_path: Path
) -> None:
    import engram.index.indexer as indexer

    notes = {f"N{i}.md": f"# N{i}\n\n## Part\n\n[[N{(i + 7) % 30}#Part]] [[N{(i * 3) % 30}]]\n"
             for i in range(30)}  # fmt: skip
    root = write_tree(tmp_path / "w", notes)
    engram.collection_add(str(root), "w")
    calls = 0

    def progress(done: int, total: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # after the first committed batch
            raise KeyboardInterrupt

    old = indexer.BATCH_MAX
    indexer.BATCH_MAX = 10
    try:
        with pytest.raises(KeyboardInterrupt):
            engram.update(progress=progress)
    finally:
        indexer.BATCH_MAX = old
    engram.update()
    for i in range(30):
        links = engram.links(f"N{i}", "w").links
        assert [lk.path for lk in links] == [f"N{(i + 7) % 30}.md", f"N{(i * 3) % 30}.md"]
        assert links[0].heading_found is True
    assert [b.path for b in engram.backlinks("N0", "w").links] == [
        "N0.md", "N10.md", "N20.md", "N23.md",
    ]  # fmt: skip
