"""Incremental indexing on a real SQLite file: add, modify, rename, delete, no-op, bad input."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from engram.service import Engram
from engram.store import admin


def paths(e: Engram) -> list[str]:
    return [r["path"] for r in admin.all_documents(e.db.conn)]


def test_tiny_vault_indexes_what_it_should(indexed: Engram) -> None:
    assert paths(indexed) == [
        "Broken.md",
        "Café Notes.md",
        "Empty.md",
        "Projects/Pricing.md",
        "Welcome.md",
        "日本語/東京.md",
    ]
    conn = indexed.db.conn
    links = conn.execute(
        "SELECT target, heading, block, display, embed, kind FROM links l "
        "JOIN documents d ON d.id = l.doc_id WHERE d.path = 'Welcome.md' "
        "ORDER BY l.id"
    ).fetchall()
    assert [tuple(r) for r in links] == [
        ("Projects/Pricing", None, None, "pricing", 0, "wikilink"),
        ("Café Notes", None, None, None, 0, "wikilink"),
        ("Projects/Pricing", "Decision", None, None, 0, "wikilink"),
        ("Projects/Pricing", None, "tiers", None, 0, "wikilink"),
        ("diagram.png", None, None, None, 1, "wikilink"),
        ("Projects/Pricing.md", None, None, "markdown link", 0, "markdown"),
    ]
    tags = {r[0] for r in conn.execute("SELECT tag FROM tags")}
    assert tags == {"meta", "project", "area/business", "coffee"}
    assert "notatag" not in tags


def test_update_reports_skips_and_warnings(engram: Engram, tiny_vault: Path) -> None:
    engram.collection_add(str(tiny_vault), "notes")
    report = engram.update()
    assert (report.added, report.skipped) == (6, 1)
    messages = {w.path: w.message for w in report.warnings}
    assert "binary" in messages["Binary.md"]
    assert "frontmatter" in messages["Broken.md"]


def test_incremental_cycle(engram: Engram, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nalpha [[b]]\n")
    (vault / "b.md").write_text("# B\n\nbeta\n")
    engram.collection_add(str(vault), "v")
    r = engram.update()
    assert (r.added, r.unchanged) == (2, 0)

    r = engram.update()  # no-op
    assert (r.added, r.updated, r.removed, r.unchanged) == (0, 0, 0, 2)

    (vault / "a.md").write_text("# A\n\nalpha changed [[c]]\n")
    r = engram.update()
    assert (r.updated, r.unchanged) == (1, 1)
    assert [x.path for x in engram.search("changed")] == ["a.md"]

    os.utime(vault / "b.md", ns=(1, 1))  # touched, same content
    r = engram.update()
    assert (r.updated, r.unchanged) == (0, 2)

    doc_id = engram.search("beta")[0].doc_id
    (vault / "sub").mkdir()
    (vault / "b.md").rename(vault / "sub" / "renamed.md")
    r = engram.update()
    assert (r.renamed, r.added, r.removed) == (1, 0, 0)
    moved = engram.search("beta")[0]
    assert (moved.path, moved.doc_id, moved.title) == ("sub/renamed.md", doc_id, "B")

    (vault / "a.md").unlink()
    r = engram.update()
    assert r.removed == 1
    assert paths(engram) == ["sub/renamed.md"]
    assert engram.search("alpha") == []


def test_rename_updates_a_filename_title(engram: Engram, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "old name.md").write_text("no heading here, just words\n")
    engram.collection_add(str(vault), "v")
    engram.update()
    (vault / "old name.md").rename(vault / "new name.md")
    engram.update()
    assert engram.search("words")[0].title == "new name"


def test_invalid_utf8_and_oversize(
    engram: Engram, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "latin1.md").write_bytes("caf\xe9 cr\xe8me searchable".encode("latin-1"))
    (vault / "big.md").write_text("x" * 5000)
    engram.collection_add(str(vault), "v")
    engram.settings = engram.settings.__class__(
        **{**engram.settings.__dict__, "max_file_bytes": 1000}
    )
    report = engram.update()
    messages = {w.path: w.message for w in report.warnings}
    assert "invalid UTF-8" in messages["latin1.md"]
    assert "over the 1,000-byte limit" in messages["big.md"]
    assert [r.path for r in engram.search("searchable")] == ["latin1.md"]


def test_collection_rename_and_remove(indexed: Engram) -> None:
    indexed.collection_rename("notes", "kb")
    assert {r["collection"] for r in admin.all_documents(indexed.db.conn)} == {"kb"}
    assert indexed.search("espresso")[0].collection == "kb"
    assert indexed.collection_remove("kb") == 6
    assert admin.all_documents(indexed.db.conn) == []


def test_interrupted_update_leaves_consistent_index(engram: Engram, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    for i in range(50):
        (vault / f"n{i}.md").write_text(f"# N{i}\n\nword{i} common\n")
    engram.collection_add(str(vault), "v")
    calls = 0

    def progress(done: int, total: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise KeyboardInterrupt

    import engram.index.indexer as indexer

    old = indexer.BATCH_MAX
    indexer.BATCH_MAX = 10
    try:
        with pytest.raises(KeyboardInterrupt):
            engram.update(progress=progress)
    finally:
        indexer.BATCH_MAX = old
    partial = len(paths(engram))
    assert 0 < partial < 50
    assert admin.fts_integrity(engram.db.conn) is None
    r = engram.update()
    assert r.added == 50 - partial
    assert len(engram.search("common", n=None)) == 50


def test_readers_never_see_database_locked(
    engram: Engram, tmp_path: Path, xdg: dict[str, str]
) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    for i in range(600):
        (vault / f"n{i}.md").write_text(f"# N{i}\n\nshared term plus unique{i}\n" * 20)
    engram.collection_add(str(vault), "v")
    errors: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        from engram import config

        other = Engram(config.resolve(os.environ))
        try:
            while not done.is_set():
                other.search("shared term")
                other.status()
                time.sleep(0.005)
        except BaseException as exc:
            errors.append(exc)
        finally:
            other.close()

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        engram.update()
    finally:
        done.set()
        for t in threads:
            t.join()
    assert errors == []
    assert len(engram.search("shared", n=None)) == 600
