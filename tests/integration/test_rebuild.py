"""`engram rebuild`: the index made again from the files, beside the old one, then swapped in;
vectors and what no file can give back are kept."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import config
from engram.errors import ConflictError
from engram.models.fake import FakeEmbedder
from engram.server.discovery import IndexLock
from engram.service import Engram
from engram.store import admin, rebuild, vectors
from engram.store.db import Database, sqlite_module
from tests.conftest import EngramCli, write_tree

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"
QUERIES = ("pricing decision", "espresso roasters", "Ana", "tiered plans", "東京")


@pytest.fixture
def fake() -> FakeEmbedder:
    return FakeEmbedder(dim=64, max_tokens=64)


@pytest.fixture
def example(xdg: dict[str, str], tmp_path: Path, fake: FakeEmbedder) -> Iterator[Engram]:
    e = Engram(config.resolve(os.environ), embedder=fake)
    e.collection_add(str(shutil.copytree(EXAMPLE, tmp_path / "example")), "example")
    e.update()
    yield e
    e.close()


def answers(e: Engram) -> list[list[tuple[str, float, int]]]:
    """What searching shows: paths, scores and lines of every query's hits."""
    return [[(r.path, round(r.score, 6), r.line) for r in e.search(q)] for q in QUERIES]


def test_a_deleted_index_is_rebuilt_with_the_same_search_results(example: Engram) -> None:
    before = answers(example)
    links = example.backlinks("Projects/Pricing Model.md")
    path = example.settings.db_path
    example.close()
    rebuild.remove(path)
    assert not path.exists()
    report = example.rebuild()
    assert report.restored and report.update.added == 11 and report.carried == {}
    assert answers(example) == before
    assert example.backlinks("Projects/Pricing Model.md") == links
    assert not (path.parent / f"{path.stem}.rebuild.sqlite").exists()


def test_a_damaged_index_file_is_replaced(example: Engram) -> None:
    before = answers(example)
    path = example.settings.db_path
    example.close()
    rebuild.remove(path)
    path.write_bytes(b"not a database, " * 512)
    (path.parent / f"{path.name}-wal").write_bytes(b"stale" * 100)  # must not be replayed
    report = example.rebuild()
    assert report.restored and "could not be read" in " ".join(report.notes)
    assert answers(example) == before


def test_rebuild_keeps_vectors_and_embeds_nothing_again(
    example: Engram, fake: FakeEmbedder
) -> None:
    first = example.embed()
    assert first.embedded > 0
    calls = len(fake.calls)
    near = [(r.path, round(r.score, 6)) for r in example.vsearch("espresso roasters")]
    before = answers(example)
    report = example.rebuild()
    assert len(fake.calls) == calls  # no passage went through the model
    assert report.carried["embeddings"] == first.embedded and report.to_embed == 0
    assert report.chunks == first.chunks and not report.restored
    assert vectors.vector_count(example.db.conn) == first.embedded
    assert example.embed().embedded == 0 and len(fake.calls) == calls
    assert [(r.path, round(r.score, 6)) for r in example.vsearch("espresso roasters")] == near
    assert answers(example) == before


def test_rebuild_reads_changed_files_and_drops_vectors_no_passage_uses(
    example: Engram, fake: FakeEmbedder, tmp_path: Path
) -> None:
    example.embed()
    vault = tmp_path / "example"
    (vault / "Home.md").unlink()  # changes the index has not seen yet
    (vault / "New.md").write_text("# New\n\nA fresh note about cold brew.\n", encoding="utf-8")
    report = example.rebuild()
    assert report.update.added == 11 and report.to_embed == 1
    assert [r.path for r in example.search("cold brew")] == ["New.md"]
    assert all(r.path != "Home.md" for r in example.search("home"))
    calls = len(fake.calls)
    assert example.embed().embedded == 1 and len(fake.calls) == calls + 1


def test_rebuild_refuses_while_another_connection_has_the_index_open(example: Engram) -> None:
    before = answers(example)
    other = Database(example.settings.db_path)
    other.conn.execute("SELECT count(*) FROM documents").fetchone()
    try:
        with pytest.raises(ConflictError, match="has the index open"):
            example.rebuild()
        assert other.conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 11
    finally:
        other.close()
    assert answers(example) == before  # untouched and usable
    assert example.rebuild().update.added == 11


def test_during_a_rebuild_the_old_index_reads_but_holds_writes_off(example: Engram) -> None:
    """Another process keeps searching the old index; a write it tried would land in a file
    about to be replaced, so it waits (here: gives up) instead of being lost."""
    path = example.settings.db_path
    seen: list[tuple[int, str]] = []

    def meanwhile(phase: str, done: int, total: int) -> None:
        if seen:
            return
        other = sqlite_module().connect(str(path), isolation_level=None, timeout=0.2)
        try:
            count = other.execute("SELECT count(*) FROM documents").fetchone()[0]
            try:
                other.execute("INSERT INTO fact_access (id, access_count) VALUES ('x', 1)")
                outcome = "written"
            except sqlite_module().OperationalError as exc:
                outcome = str(exc)
        finally:
            other.close()
        seen.append((count, outcome))

    example.rebuild(progress=meanwhile)
    assert seen == [(11, "database is locked")]
    assert example.db.conn.execute("SELECT count(*) FROM fact_access").fetchone()[0] == 0


def test_every_table_is_rebuilt_or_carried(tmp_path: Path, fake: FakeEmbedder) -> None:
    """A table added later must be classified: derived from files, or carried over."""
    db = Database(tmp_path / "i.sqlite")
    with db.write() as conn:
        vectors.create_vector_table(conn, fake.dim)
    found = rebuild.tables(db.conn)
    db.close()
    unclassified = found - rebuild.DERIVED - set(rebuild.KEPT) - {vectors.VECTOR_TABLE}
    assert unclassified == set()
    assert not rebuild.DERIVED & set(rebuild.KEPT)


def test_cli_confirms_and_refuses_while_a_daemon_holds_the_index(
    run: EngramCli, xdg: dict[str, str], tiny_vault: Path
) -> None:
    run(xdg, "collection", "add", str(tiny_vault), "--name", "notes")
    unconfirmed = run(xdg, "rebuild", ok=False)  # stdin is no terminal
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr
    settings = config.resolve(xdg)
    lock = IndexLock(settings.data_dir, settings.index_name)  # what `engram serve` holds
    assert lock.acquire()
    try:
        refused = run(xdg, "rebuild", "--yes", ok=False)
    finally:
        lock.release()
    assert refused.returncode == 1 and "engram serve is running" in refused.stderr
    done = run(xdg, "rebuild", "--yes")
    assert "rebuilt from the files: 6 documents" in done.stdout


@pytest.mark.slow
def test_a_rebuild_killed_midway_leaves_the_old_index_working(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path
) -> None:
    """The rebuild runs in a process of its own, SIGKILLed while it writes the new index."""
    notes = {
        f"n{i:04}.md": f"# Note {i}\n\nword{i % 50} shared text [[n{i // 2:04}]]\n"
        for i in range(1500)
    }
    vault = write_tree(tmp_path / "big", notes)
    run(xdg, "collection", "add", str(vault), "--name", "big")
    before = run(xdg, "search", "word7 shared", "--files").stdout
    index = config.resolve(xdg).db_path
    partial = index.parent / f"{index.stem}.rebuild.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "rebuild", "--yes"],
        env={**os.environ, **xdg},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not partial.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)  # into indexing the new file (1,500 notes take far longer)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert partial.exists()  # killed before the swap: the half-built file is still there
    db = Database(index)
    assert admin.quick_check(db.conn) == "ok"
    db.close()
    assert run(xdg, "search", "word7 shared", "--files").stdout == before
    run(xdg, "rebuild", "--yes")
    assert not partial.exists()
    assert run(xdg, "search", "word7 shared", "--files").stdout == before
