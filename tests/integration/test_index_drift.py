"""Regressions the differential test (test_index_differential.py) found: each is a way the
incrementally kept index used to differ from a fresh index of the same files."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from engram.models.fake import FakeEmbedder
from engram.service import Engram
from engram.store import facts as facts_store
from tests.conftest import write_tree

JAN_2020 = 1_577_836_800 * 10**9
JAN_2025 = 1_735_689_600 * 10**9


def setup(engram: Engram, tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    root = write_tree(tmp_path / "v", files)
    engram.collection_add(str(root), "v")
    engram.update()
    return root


def test_a_touched_note_takes_its_new_date(engram: Engram, tmp_path: Path) -> None:
    """Same text, new modification time: the date filters and a fact's updatedAt follow the
    time, as a fresh index would (they kept the old one)."""
    root = write_tree(
        tmp_path / "v",
        {
            "plain.md": "walrus notes\n",
            "Engram/facts/f.md": "---\nid: f1\nfactType: fact\n---\nwalrus fact\n",
        },
    )
    for rel in ("plain.md", "Engram/facts/f.md"):
        os.utime(root / rel, ns=(JAN_2020, JAN_2020))
    engram.init_vault(str(root), "v", template=False)
    assert [r.path for r in engram.search("kind:all walrus after:2024-01-01")] == []
    for rel in ("plain.md", "Engram/facts/f.md"):
        os.utime(root / rel, ns=(JAN_2025, JAN_2025))
    engram.update()
    found = sorted(r.path for r in engram.search("kind:all walrus after:2024-01-01"))
    assert found == ["Engram/facts/f.md", "plain.md"]
    fact = facts_store.by_id(engram.db.conn, "f1")
    assert fact is not None and fact["updated_at"].startswith("2025-01-01")


def test_the_watcher_path_lists_attachments(engram: Engram, tmp_path: Path) -> None:
    """An image added or a folder of images moved away, seen by the watcher: embeds resolve
    and dangle as after a full update (the watcher's paths used to be filtered to notes)."""
    root = setup(engram, tmp_path, {"Home.md": "![[img.png]] ![[pics/a.png]]\n"})
    write_tree(root, {"img.png": b"\x89PNG", "pics/a.png": b"\x89PNG"})
    engram.update_changed("v", ["img.png", "pics"])
    assert [lk.path for lk in engram.links("Home").links] == ["img.png", "pics/a.png"]
    (root / "pics").rename(root / ".hidden")
    engram.update_changed("v", ["pics", ".hidden"])
    assert [lk.path for lk in engram.links("Home").links] == ["img.png", None]


def test_a_renamed_note_is_stored_again(engram: Engram, tmp_path: Path) -> None:
    """A rename keeps the row but re-derives it from the new path: a heading title that
    equals the old file name stays, a file-name title follows, aliases stay searchable."""
    setup(
        engram,
        tmp_path,
        {
            "Target.md": "# Target\n\nbody one\n",
            "plain.md": "---\naliases: [Narwhal]\n---\nbody two\n",
        },
    )
    root = tmp_path / "v"
    (root / "Target.md").rename(root / "Target2.md")
    (root / "plain.md").rename(root / "renamed.md")
    assert engram.update().renamed == 2
    assert engram.get("Target2.md").title == "Target"
    assert engram.get("renamed.md").title == "renamed"
    assert [r.path for r in engram.search("narwhal")] == ["renamed.md"]


def test_chunks_follow_a_renamed_title(xdg: dict[str, str], tmp_path: Path) -> None:
    """Passages carry the note's title; a note titled by its file name is chunked again when
    renamed (its passages kept the old name)."""
    from engram import config

    e = Engram(config.resolve(os.environ), embedder=FakeEmbedder(dim=8))
    try:
        root = setup(e, tmp_path, {"Old name.md": "body text\n"})
        assert e.embed().documents_chunked == 1
        (root / "Old name.md").rename(root / "New name.md")
        e.update()
        again = e.embed()
        assert (again.documents_chunked, again.embedded) == (1, 1)
        assert e.embed().documents_chunked == 0
    finally:
        e.close()


def test_a_note_that_becomes_binary_loses_its_heading_flags(engram: Engram, tmp_path: Path) -> None:
    """Its file stays (links still resolve to it) but it is no note any more: whether a
    heading exists is unknown, as in a fresh index (the flags used to stay)."""
    root = setup(engram, tmp_path, {"Home.md": "[[T#Plan]]\n", "T.md": "# T\n\n## Plan\n"})
    assert [lk.heading_found for lk in engram.links("Home").links] == [True]
    (root / "T.md").write_bytes(b"%PDF-1.4\n\x00\x01 binary")
    engram.update()
    assert [(lk.path, lk.heading_found) for lk in engram.links("Home").links] == [("T.md", None)]
    (root / "T.md").write_text("# T\n\n## Other\n", encoding="utf-8")
    engram.update()
    assert [lk.heading_found for lk in engram.links("Home").links] == [False]


class Stop(Exception):
    """The process stops (Ctrl-C, a daemon shutting down)."""


def update_stopped_at_the_end(engram: Engram) -> None:
    """An update stopped once every note is stored, before what follows it (refreshes)."""

    def stop_at_the_end(done: int, total: int) -> None:
        if done == total:
            raise Stop

    with contextlib.suppress(Stop):
        engram.update(progress=stop_at_the_end)


def test_an_interrupted_update_leaves_fact_rows_to_the_next(engram: Engram, tmp_path: Path) -> None:
    """Stopped once its notes were stored but before the fact rows were refreshed: the next
    update, which finds no file changed, still makes the fact's row (it never did)."""
    root = write_tree(tmp_path / "v", {"Home.md": "home\n"})
    engram.init_vault(str(root), "v", template=False)
    write_tree(root, {"Engram/facts/f.md": "---\nid: f2\nfactType: fact\n---\nan otter fact\n"})
    update_stopped_at_the_end(engram)
    assert facts_store.by_id(engram.db.conn, "f2") is None
    assert engram.update().added == 0
    assert facts_store.by_id(engram.db.conn, "f2") is not None


def test_change_numbers_are_not_reused_after_a_delete(engram: Engram, tmp_path: Path) -> None:
    """The fact refresh's cursor counts document changes: a deleted note must not hand its
    number to the next note stored, which the cursor would then take as already seen."""
    root = write_tree(tmp_path / "v", {"a.md": "a\n", "b.md": "b\n"})
    engram.init_vault(str(root), "v", template=False)
    (root / "b.md").unlink()
    engram.update()
    write_tree(root, {"Engram/facts/z.md": "---\nid: z1\nfactType: fact\n---\na zebra fact\n"})
    engram.update()
    assert facts_store.by_id(engram.db.conn, "z1") is not None


def test_the_graph_is_rebuilt_after_an_interrupted_update(engram: Engram, tmp_path: Path) -> None:
    """The graph kept in memory is keyed by counters in the index: an update stopped before
    its link refresh (which bumped the only counter) must not leave the old graph in use."""
    root = setup(engram, tmp_path, {"A.md": "[[B]]\n", "B.md": "# B\n"})
    assert engram.orphans() == []  # the graph is built and kept
    (root / "B.md").rename(root / "C.md")
    (root / "A.md").write_text("[[C]]\n", encoding="utf-8")
    update_stopped_at_the_end(engram)
    engram.update()
    assert sorted((n.path, n.backlinks) for n in engram.rank().notes) == [("A.md", 0), ("C.md", 1)]


def test_every_case_above_equals_a_fresh_index(engram: Engram, tmp_path: Path) -> None:
    """The comparison itself: an index and a fresh build of the same folder agree."""
    root = setup(engram, tmp_path, {"Home.md": "[[T#Plan]] ![[img.png]]\n", "T.md": "# T\n"})
    (root / "T.md").rename(root / "U.md")
    engram.update()
    from engram import config
    from engram.index import verify

    fresh = Engram(config.resolve(os.environ, index="fresh"))
    try:
        fresh.collection_add(str(root), "v")
        fresh.update()
        assert (
            verify.compare(
                verify.snapshot(engram.db.conn, "v"), verify.snapshot(fresh.db.conn, "v")
            )
            == []
        )
    finally:
        fresh.close()
