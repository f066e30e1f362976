"""PDF text page by page (vault/pdf.py), on PDFs made here and on the bench's real ones."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from engram.vault import pdf
from tests import pdfs

BENCH = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "attachments"


def bench(name: str) -> bytes:
    path = BENCH / name
    if not path.is_file():
        pytest.skip(f"{path} is not here (../shared/bench/attachments)")
    return path.read_bytes()


def test_every_page_and_the_outline() -> None:
    data = pdfs.pdf(
        ["First page\nsecond line", "Zebra (striped) on page two", "The end"],
        outline=[("Intro", 0), ("Zebras", 1), ("End", 2)],
    )
    text = pdf.extract(data)
    assert text.pages == ("First page\nsecond line", "Zebra (striped) on page two", "The end")
    assert text.outline == ((1, "Intro", 1), (1, "Zebras", 2), (1, "End", 3))
    assert text.page_count == 3 and text.warnings == ()


def test_a_damaged_cross_reference_table_is_rebuilt() -> None:
    data = pdfs.broken_xref(pdfs.pdf(["alpha page", "beta page"]))
    assert pdf.extract(data).pages == ("alpha page", "beta page")


@pytest.mark.parametrize(
    "data",
    [pdfs.truncated(pdfs.pdf(["half written"] * 3)), b"not a pdf at all", b""],
    ids=["half-written", "garbage", "empty"],
)
def test_what_is_no_pdf_is_an_error_with_a_reason(data: bytes) -> None:
    with pytest.raises(pdf.PdfError, match="skipped"):
        pdf.extract(data)


def test_pages_without_a_text_layer_say_so() -> None:
    text = pdf.extract(pdfs.drawing_only(3))
    assert text.pages == ("", "", "") and not text.has_text
    assert text.warnings == (pdf.NO_TEXT,)


def test_ten_thousand_pages_stop_at_the_page_limit_quickly() -> None:
    started = time.monotonic()
    text = pdf.extract(pdfs.many_pages(10_000))
    assert time.monotonic() - started < 20
    assert len(text.pages) == pdf.MAX_PAGES and text.page_count == 10_000
    assert "the first 5,000 are indexed" in text.warnings[0]


def test_the_time_budget_keeps_the_pages_read_so_far() -> None:
    ticks = iter(range(0, 1000, 10))  # each page seems to take 10 s
    text = pdf.extract(pdfs.pdf([f"page {i}" for i in range(8)]), clock=lambda: next(ticks))
    assert text.pages == ("page 0", "page 1", "page 2")
    assert "pages 4-8 not indexed" in text.warnings[0]


def test_the_character_limit_keeps_whole_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf, "MAX_CHARS", 25)
    text = pdf.extract(pdfs.pdf(["a" * 10, "b" * 10, "c" * 10]))
    assert text.pages == ("a" * 10, "b" * 10)
    assert "pages 3-3 not indexed" in text.warnings[0]


def test_a_decompression_bomb_is_read_within_the_memory_it_needs() -> None:
    """300 MB of white space behind a 300 KB stream: read in a few seconds (the worker's
    memory cap and deadline stop bigger ones: tests/integration/test_attachments.py)."""
    started = time.monotonic()
    assert pdf.extract(pdfs.inflating(300)).pages == ("Bomb page text",)
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("one\r\ntwo\rthree", "one\ntwo\nthree"),
        ("manip\ufffeulation", "manipulation"),  # PDFium's mark of a word hyphenated at a break
        ("a\x03b\x00c", "a b c"),
        ("x   \n\n\n\ny  ", "x\n\ny"),
    ],
)
def test_normalize(raw: str, text: str) -> None:
    assert pdf.normalize(raw) == text


@pytest.mark.parametrize(
    ("raw", "date"),
    [
        ("D:20220406201541+02'00'", "2022-04-06"),
        ("20220406", "2022-04-06"),
        ("D:2022", "2022-01-01"),
        ("D:20221345", None),
        ("yesterday", None),
        ("", None),
    ],
)
def test_pdf_date(raw: str, date: str | None) -> None:
    assert pdf.pdf_date(raw) == date


def test_bench_arabic_reads_in_reading_order() -> None:
    """PDFium gives "يبيبَح" (drawn left to right); the page says "حَبيبي", as pypdf reads it."""
    text = pdf.extract(bench("habibi.pdf")).pages[0]
    assert text.count("حَبيبي") == 2 and "habibi" in text.split()
    assert "يبيبَح" not in text


def test_bench_encrypted_pdf_is_refused_with_the_reason() -> None:
    with pytest.raises(pdf.PdfError, match="encrypted"):
        pdf.extract(bench("libreoffice-writer-password.pdf"))


def test_bench_outline_and_pages() -> None:
    text = pdf.extract(bench("pdflatex-outline.pdf"))
    assert text.page_count == 4 and len(text.pages) == 4
    assert text.outline[:3] == ((1, "Foo", 2), (1, "Bar", 2), (1, "Baz", 2))
    four = pdf.extract(bench("pdflatex-4-pages.pdf"))
    assert [len(p) > 2000 for p in four.pages] == [True] * 4
