"""The text of a PDF, page by page, with bounded work (pypdfium2: PDFium, Chrome's PDF engine).

PDFium was chosen over pypdf and pdfminer.six for speed (4-18x theirs on the bench PDFs and two
manuals: docs/benchmarks.md) and for its tolerance of damaged files (it rebuilds a broken
cross-reference table); it is BSD/Apache licensed. It gives right-to-left text in visual order
("يبيبَح" for "حَبيبي"), which `_logical` turns back into reading order.

A PDF is hostile input like a note, and this runs in the indexer's worker processes (a native
crash or a runaway page kills the worker, never the indexer). The work is bounded here too:
at most MAX_PAGES pages, MAX_PAGE_CHARS characters a page and MAX_CHARS in all, and a time
budget checked between pages; going over any of them keeps what was read, with a warning.
"""

from __future__ import annotations

import datetime as dt
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Bump when the text this module makes from the same file changes: cached texts of an older
# extractor are read again.
EXTRACTOR = "pdfium-1"
MAX_BYTES = 200_000_000  # a PDF larger than this is skipped (notes: max_file_bytes)
MAX_PAGES = 5_000
MAX_PAGE_CHARS = 200_000
MAX_CHARS = 10_000_000
MAX_OUTLINE = 2_000  # outline entries kept (headings)
MAX_OUTLINE_DEPTH = 8
TIME_BUDGET_SECONDS = 30.0  # then the pages read so far are kept
NO_TEXT = "no text (scanned?): no page has a text layer; OCR the PDF to make it searchable"

_RTL_RANGES = (
    (0x0590, 0x08FF),  # Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, Arabic ext.
    (0xFB1D, 0xFDFF),  # Hebrew and Arabic presentation forms A
    (0xFE70, 0xFEFF),  # Arabic presentation forms B
    (0x10800, 0x10FFF),
    (0x1E800, 0x1EFFF),
)
_RTL_HINT = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")
_BLANK_LINES = re.compile(r"\n{3,}")
_TRAILING = re.compile(r"[ \t]+\n")
_META = (("Title", "pdfTitle"), ("Author", "author"), ("Subject", "subject"))


class PdfError(Exception):
    """The PDF cannot be read at all (encrypted, or not a PDF): the reason, for a warning."""


@dataclass(frozen=True)
class PdfText:
    """What a PDF gave: its pages' text, its outline, metadata and what went wrong."""

    pages: tuple[str, ...]
    outline: tuple[tuple[int, str, int], ...] = ()  # (level from 1, title, page from 1)
    page_count: int = 0  # pages in the file (more than `pages` when a limit stopped reading)
    meta: tuple[tuple[str, str], ...] = ()  # (key, value): pdfTitle, author, subject, created
    warnings: tuple[str, ...] = ()

    @property
    def has_text(self) -> bool:
        """Whether any page has a text layer."""
        return any(p.strip() for p in self.pages)


def extract(data: bytes, clock: Callable[[], float] = time.monotonic) -> PdfText:
    """The text of every page of the PDF `data` (within the limits above); PdfError when the
    file cannot be opened (a password is needed, or it is no PDF)."""
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise PdfError(_open_error(exc)) from None
    try:
        return _read(doc, clock)
    finally:
        doc.close()


def _open_error(exc: Any) -> str:
    code = getattr(exc, "err_code", None)
    if code == 4:  # FPDF_ERR_PASSWORD
        return "encrypted: a password is needed to open it; skipped"
    if code == 5:  # FPDF_ERR_SECURITY
        return "encrypted with an unsupported security handler; skipped"
    return f"not readable as a PDF ({exc}); skipped"


def _read(doc: Any, clock: Callable[[], float]) -> PdfText:
    started = clock()
    count = len(doc)
    warnings: list[str] = []
    pages: list[str] = []
    total = 0
    for index in range(min(count, MAX_PAGES)):
        if clock() - started > TIME_BUDGET_SECONDS:
            warnings.append(
                f"read for {TIME_BUDGET_SECONDS:.0f} s: pages {index + 1}-{count} not indexed"
            )
            break
        text = _page_text(doc, index, warnings)
        if total + len(text) > MAX_CHARS:
            warnings.append(
                f"over {MAX_CHARS:,} characters of text: pages {index + 1}-{count} not indexed"
            )
            break
        total += len(text)
        pages.append(text)
    else:
        if count > MAX_PAGES:
            warnings.append(
                f"{count:,} pages: the first {MAX_PAGES:,} are indexed (pages over the limit)"
            )
    result = PdfText(tuple(pages), _outline(doc, len(pages)), count, _meta(doc))
    if pages and not result.has_text:
        warnings.append(NO_TEXT)
    return PdfText(result.pages, result.outline, count, result.meta, tuple(warnings))


def _page_text(doc: Any, index: int, warnings: list[str]) -> str:
    """One page's text, normalized; "" with a warning when the page cannot be read."""
    import pypdfium2 as pdfium

    try:
        page = doc[index]
    except pdfium.PdfiumError:
        warnings.append(f"page {index + 1} could not be read")
        return ""
    try:
        textpage = page.get_textpage()
        try:
            chars = textpage.count_chars()
            if chars > MAX_PAGE_CHARS:
                warnings.append(
                    f"page {index + 1} holds {chars:,} characters: the first "
                    f"{MAX_PAGE_CHARS:,} are indexed"
                )
                chars = MAX_PAGE_CHARS
            text = textpage.get_text_range(0, chars) if chars > 0 else ""
            if _RTL_HINT.search(text):
                text = _logical(textpage, chars)
        finally:
            textpage.close()
    except pdfium.PdfiumError:
        warnings.append(f"page {index + 1}: its text could not be read")
        return ""
    finally:
        page.close()
    return normalize(text)


def normalize(text: str) -> str:
    """Line breaks as `\\n`, PDFium's hyphenation marks joined, control characters as
    spaces, no trailing spaces, at most one blank line in a row, no blank edges."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufffe", "")
    text = _CONTROL.sub(" ", text)
    text = _TRAILING.sub("\n", text)
    return _BLANK_LINES.sub("\n\n", text).strip()


def is_rtl(code: int) -> bool:
    """Whether a code point belongs to a right-to-left script."""
    return any(lo <= code <= hi for lo, hi in _RTL_RANGES)


def _logical(textpage: Any, count: int) -> str:
    """The page's text with each right-to-left run in reading order.

    PDFium lists characters left to right as drawn: a right-to-left word comes out reversed.
    A run (RTL letters, their marks, and spaces between them) whose characters lie left to
    right on the page, or all on one glyph (a ligature mapped to a whole word), is reversed
    with each mark kept after its letter; one drawn right to left is in reading order already.
    """
    import pypdfium2.raw as raw

    codes = [raw.FPDFText_GetUnicode(textpage.raw, i) for i in range(count)]
    out: list[str] = []
    i = 0
    while i < count:
        if not is_rtl(codes[i]):
            out.append(_char(codes[i]))
            i += 1
            continue
        end = i
        j = i
        while j < count and (is_rtl(codes[j]) or _is_mark(codes[j]) or codes[j] == 32):
            if is_rtl(codes[j]) or _is_mark(codes[j]):
                end = j + 1
            j += 1
        out.append(_run(textpage, codes, i, end))
        i = end
    return "".join(out)


def _run(textpage: Any, codes: list[int], start: int, end: int) -> str:
    first = textpage.get_charbox(start)[0]
    last = textpage.get_charbox(end - 1)[0]
    text = [_char(c) for c in codes[start:end]]
    if last < first:  # drawn right to left: already in reading order
        return "".join(text)
    clusters: list[list[str]] = []  # each letter with the marks drawn on it
    pending: list[str] = []  # marks met before their letter (left of it in visual order)
    for ch in text:
        if unicodedata.category(ch).startswith("M"):
            pending.append(ch)
        else:
            clusters.append([ch, *pending])
            pending = []
    if pending:
        if clusters:
            clusters[-1].extend(pending)
        else:
            clusters.append(pending)
    return "".join("".join(c) for c in reversed(clusters))


def _is_mark(code: int) -> bool:
    return unicodedata.category(_char(code)).startswith("M")


def _char(code: int) -> str:
    if code < 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return " "
    return chr(code)


def _outline(doc: Any, pages: int) -> tuple[tuple[int, str, int], ...]:
    """The outline (bookmarks) as (level, title, page), entries pointing at a page that was
    read; PDFium stops at loops and at MAX_OUTLINE_DEPTH."""
    out: list[tuple[int, str, int]] = []
    try:
        for mark in doc.get_toc(max_depth=MAX_OUTLINE_DEPTH):
            if len(out) >= MAX_OUTLINE:
                break
            dest = mark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((mark.get_title() or "").split())[:300]
            if index is not None and 0 <= index < pages and title:
                out.append((mark.level + 1, title, index + 1))
    except Exception:  # a damaged outline costs the headings, never the text
        return tuple(out)
    return tuple(out)


def _meta(doc: Any) -> tuple[tuple[str, str], ...]:
    try:
        info = doc.get_metadata_dict(skip_empty=True)
    except Exception:
        return ()
    out = [(key, " ".join(str(info[name]).split())[:500]) for name, key in _META if name in info]
    created = pdf_date(str(info.get("CreationDate", "")))
    if created:
        out.append(("created", created))
    return tuple((k, v) for k, v in out if v)


_PDF_DATE = re.compile(r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?")


def pdf_date(text: str) -> str | None:
    """A PDF date (`D:20220406201541+02'00'`) as an ISO 8601 date-time, None if unreadable."""
    m = _PDF_DATE.match(text.strip())
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) if g else None for g in m.groups())
    try:
        when = dt.datetime(
            year or 1, month or 1, day or 1, hour or 0, minute or 0, second or 0, tzinfo=dt.UTC
        )
    except ValueError:
        return None
    if year is None or year < 1900:
        return None
    return when.date().isoformat()
