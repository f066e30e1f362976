"""PDFs and canvases in a vault: searched by keyword, meaning and both, at the right page;
opened at a page; linked in the graph; cached; kept equal to a rebuild; bounded when hostile."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engram import config
from engram.errors import NotFoundError
from engram.index import indexer, verify
from engram.models.fake import FakeEmbedder
from engram.service import Engram
from engram.store import extracts
from engram.store.db import Database
from engram.vault import pdf
from tests import pdfs
from tests.conftest import write_tree

BENCH = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "attachments"

PAPER = pdfs.pdf(
    [
        "Grazing animals of the open plain",
        "Lions rest in the shade at noon",
        "The zebra crossing the river at dusk\nstripes confuse the flies",
    ],
    outline=[("Plains", 0), ("Predators", 1), ("Zebras", 2)],
)
CANVAS = {
    "nodes": [
        {
            "id": "g",
            "type": "group",
            "x": 0,
            "y": 0,
            "width": 800,
            "height": 600,
            "label": "Field trip",
        },
        {
            "id": "t",
            "type": "text",
            "x": 20,
            "y": 20,
            "width": 300,
            "height": 100,
            "text": "Bring binoculars and see [[Checklist]]",
        },
        {
            "id": "f",
            "type": "file",
            "x": 20,
            "y": 200,
            "width": 300,
            "height": 300,
            "file": "notes/Savanna.md",
        },
        {
            "id": "p",
            "type": "file",
            "x": 400,
            "y": 200,
            "width": 300,
            "height": 300,
            "file": "docs/paper.pdf",
        },
    ],
    "edges": [{"id": "e", "fromNode": "f", "toNode": "p"}],
}
VAULT = {
    "notes/Savanna.md": "# Savanna\n\nWide grassland with scattered trees.\n",
    "notes/Checklist.md": "# Checklist\n\n- water\n- hat\n",
    "docs/paper.pdf": PAPER,
    "Trip.canvas": json.dumps(CANVAS),
}


def said(report: indexer.UpdateReport) -> dict[str, str]:
    """The update's warnings by path (a warning is a tuple or an IndexWarning)."""
    out: dict[str, str] = {}
    for w in report.warnings:
        _, path, message = w if isinstance(w, tuple) else (w.collection, w.path, w.message)
        out[path] = message
    return out


@contextmanager
def facade(tmp: Path, index: str = "index") -> Iterator[Engram]:
    env = {
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
    }
    e = Engram(config.resolve(env, index=index), embedder=FakeEmbedder(dim=16))
    try:
        yield e
    finally:
        e.close()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "vault", VAULT)


@pytest.fixture
def indexed(tmp_path: Path, vault: Path) -> Iterator[Engram]:
    with facade(tmp_path) as e:
        e.collection_add(str(vault), "v")
        e.update()
        e.embed()
        yield e


def test_keyword_vector_and_hybrid_results_give_the_page(indexed: Engram) -> None:
    hit = indexed.search("zebra")[0]
    assert (hit.path, hit.page, hit.title) == ("docs/paper.pdf", 3, "paper")
    assert hit.uri == "engram://v/docs/paper.pdf#page=3" and "zebra" in hit.snippet
    assert hit.where == "v/docs/paper.pdf#page=3"
    near = indexed.vsearch("lions rest shade noon", n=3)
    assert (near[0].path, near[0].page) == ("docs/paper.pdf", 2)
    both = indexed.query("zebra crossing river", n=3, chunks=True)
    assert (both[0].path, both[0].page) == ("docs/paper.pdf", 3)
    assert both[0].passages[0].page == 3
    note = indexed.search("grassland")[0]
    assert note.page is None and note.where.endswith("Savanna.md:3")


def test_get_prints_one_page(indexed: Engram) -> None:
    page = indexed.get("docs/paper.pdf#page=3")
    assert page.text == "The zebra crossing the river at dusk\nstripes confuse the flies"
    assert page.note == "page 3 of 3" and page.from_line == 5
    whole = indexed.get("v/docs/paper.pdf")
    assert "\f" not in whole.text and whole.total_lines == 6
    with pytest.raises(NotFoundError, match="has 3 pages"):
        indexed.get("docs/paper.pdf#page=9")


def test_outline_gives_headings(indexed: Engram) -> None:
    rows = indexed.db.conn.execute(
        "SELECT h.text, h.line FROM headings h JOIN documents d ON d.id = h.doc_id"
        " WHERE d.path = 'docs/paper.pdf' ORDER BY h.line"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("Plains", 1), ("Predators", 3), ("Zebras", 5)]


def test_canvas_text_is_found_and_its_notes_link_back(indexed: Engram) -> None:
    hit = indexed.search("binoculars")[0]
    assert (hit.path, hit.title, hit.page) == ("Trip.canvas", "Trip", None)
    sources = {b.path for b in indexed.backlinks("notes/Savanna.md").links}
    assert sources == {"Trip.canvas"}
    assert {b.path for b in indexed.backlinks("notes/Checklist.md").links} == {"Trip.canvas"}
    assert "# Field trip" in indexed.get("Trip.canvas").text  # the text it reads as, no JSON
    kinds = {
        tuple(r)
        for r in indexed.db.conn.execute(
            "SELECT l.kind, l.target FROM links l JOIN documents d ON d.id = l.doc_id"
            " WHERE d.path = 'Trip.canvas'"
        )
    }
    assert kinds == {
        ("wikilink", "Checklist"),
        ("canvas", "notes/Savanna.md"),
        ("canvas", "docs/paper.pdf"),
    }


def test_pdfs_without_text_are_reported_and_encrypted_ones_skipped(
    tmp_path: Path, vault: Path
) -> None:
    write_tree(vault, {"scan.pdf": pdfs.drawing_only()})
    encrypted = BENCH / "libreoffice-writer-password.pdf"
    if encrypted.is_file():
        write_tree(vault, {"locked.pdf": encrypted.read_bytes()})
    with facade(tmp_path) as e:
        e.collection_add(str(vault), "v")
        report = e.update()
        warned = said(report)
        assert warned["scan.pdf"] == pdf.NO_TEXT
        if encrypted.is_file():
            assert "encrypted" in warned["locked.pdf"]
            with pytest.raises(NotFoundError):
                e.get("locked.pdf")
        assert e.get("scan.pdf").text.strip() == ""
        files = e.status().files
        assert files.no_text == ("v/scan.pdf",)
        assert (files.pdfs, files.canvases) == (2, 1)


def test_an_unchanged_pdf_is_never_read_again(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache by file hash answers for a touched, renamed or rebuilt PDF: nothing goes to
    the workers, and a cached text changed behind the index's back is what a rebuild shows."""
    with facade(tmp_path) as e:
        e.collection_add(str(vault), "v")
        e.update()
        sha = e.db.conn.execute("SELECT hash FROM documents WHERE path = 'docs/paper.pdf'")
        sha = sha.fetchone()[0]
        cached = extracts.get(e.db.conn, sha, pdf.EXTRACTOR)
        assert cached is not None
        with e.db.write() as conn:
            extracts.put(conn, sha, pdf.EXTRACTOR, cached._replace(pages=("from the cache",)))
        sent: list[str] = []
        real = indexer.load_all

        def load_all(collection, items, *args, **kwargs):  # type: ignore[no-untyped-def]
            sent.extend(item[1] for item in items)
            return real(collection, items, *args, **kwargs)

        monkeypatch.setattr(indexer, "load_all", load_all)
        os.utime(vault / "docs/paper.pdf", ns=(1_000_000_000, 1_000_000_000))
        e.update()
        (vault / "docs/paper.pdf").rename(vault / "docs/moved.pdf")
        report = e.update()
        assert report.renamed == 1 and sent == []
        e.rebuild()
        assert e.get("docs/moved.pdf").text == "from the cache"


def test_unchanged_pdfs_cost_a_stat(tmp_path: Path, vault: Path, monkeypatch) -> None:
    with facade(tmp_path) as e:
        e.collection_add(str(vault), "v")
        e.update()
        opened: list[str] = []
        real = os.open

        def spy(path, *args, **kwargs):  # type: ignore[no-untyped-def]
            opened.append(str(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", spy)
        report = e.update()
        assert report.unchanged == 4 and not [p for p in opened if p.endswith(".pdf")]


def test_incremental_index_equals_a_rebuild(tmp_path: Path, vault: Path) -> None:
    with facade(tmp_path) as e:
        e.collection_add(str(vault), "v")
        e.update()
        e.embed()
        canvas = dict(CANVAS)
        canvas["nodes"] = [*CANVAS["nodes"][:2], {**CANVAS["nodes"][2], "file": "notes/New.md"}]
        write_tree(
            vault,
            {
                "Trip.canvas": json.dumps(canvas),
                "notes/New.md": "# New\n\nfresh note\n",
                "docs/second.pdf": pdfs.pdf(["another paper", "about giraffes"]),
                "docs/copy.pdf": PAPER,
            },
        )
        (vault / "docs/paper.pdf").rename(vault / "docs/renamed.pdf")
        (vault / "notes/Checklist.md").unlink()
        e.update()
        e.embed()
        with facade(tmp_path, "fresh") as fresh:
            fresh.collection_add(str(vault), "v")
            fresh.update()
            fresh.embed()
            drift = verify.compare(
                verify.snapshot(e.db.conn, "v"), verify.snapshot(fresh.db.conn, "v")
            )
        assert [d.describe() for d in drift] == []
        assert e.search("giraffes")[0].page == 2


def test_hostile_pdfs_are_bounded_and_every_note_is_indexed(tmp_path: Path) -> None:
    """A 2.5 GB decompression bomb (the worker's memory cap stops it), 10,000 pages, a broken
    cross-reference table, a half-written file and garbage: each costs its own PDF at most,
    with a warning, within a bounded time; every note beside them is indexed."""
    notes = {f"n{i}.md": f"# Note {i}\n\nplain note number {i}\n" for i in range(20)}
    good = pdfs.pdf(["fine page one", "fine page two"])
    root = write_tree(
        tmp_path / "hostile",
        {
            **notes,
            "bomb.pdf": pdfs.inflating(2_500),
            "pages.pdf": pdfs.many_pages(10_000),
            "xref.pdf": pdfs.broken_xref(good),
            "half.pdf": pdfs.truncated(good),
            "junk.pdf": b"%PDF-1.7\n" + os.urandom(4096),
        },
    )
    db = Database(tmp_path / "hostile.sqlite")
    try:
        started = time.monotonic()
        report = indexer.update(
            db, [indexer.CollectionSpec("h", root, config.DEFAULT_PATTERN)], 5_000_000
        )
        assert time.monotonic() - started < 120
        paths = {r[0] for r in db.conn.execute("SELECT path FROM documents")}
        assert set(notes) <= paths
        assert {"pages.pdf", "xref.pdf"} <= paths
        warned = said(report)
        assert "first 5,000 are indexed" in warned["pages.pdf"]
        assert "skipped" in warned["bomb.pdf"] and "bomb.pdf" not in paths
        assert "skipped" in warned["half.pdf"] and "skipped" in warned["junk.pdf"]
        text = db.conn.execute(
            "SELECT c.text FROM content c JOIN documents d ON d.hash = c.hash"
            " WHERE d.path = 'xref.pdf'"
        ).fetchone()[0]
        assert "fine page two" in text
    finally:
        db.close()


def test_moving_a_note_rewrites_the_canvas_that_shows_it(indexed: Engram, vault: Path) -> None:
    """A file node's path follows the note (as in Obsidian), and a text node's link by path
    is rewritten in its own style; the canvas stays a canvas with every other node as it was."""
    canvas = json.loads((vault / "Trip.canvas").read_text())
    canvas["nodes"].append(
        {"id": "u", "type": "text", "x": 900, "y": 0, "width": 10, "height": 10,
         "text": "See [list](notes/Checklist.md) and [[notes/Checklist]]"}
    )  # fmt: skip
    (vault / "Trip.canvas").write_text(json.dumps(canvas))
    indexed.update()
    indexed.note_move("notes/Savanna.md", "archive/", collection="v")
    indexed.note_move("notes/Checklist.md", "lists/Checklist.md", collection="v")
    after = json.loads((vault / "Trip.canvas").read_text())
    files = [n["file"] for n in after["nodes"] if n["type"] == "file"]
    assert files == ["archive/Savanna.md", "docs/paper.pdf"]
    texts = [n["text"] for n in after["nodes"] if n["type"] == "text"]
    assert texts == [
        "Bring binoculars and see [[Checklist]]",  # still finds it by name: left as written
        "See [list](lists/Checklist.md) and [[lists/Checklist]]",
    ]
    assert after["edges"] == canvas["edges"]
    assert {b.path for b in indexed.backlinks("archive/Savanna.md").links} == {"Trip.canvas"}
