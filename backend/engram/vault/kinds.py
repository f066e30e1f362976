"""The kinds of file a collection indexes: notes (markdown), PDFs and canvases.

A note's indexed text is the file itself; a PDF's and a canvas's is made from the file (the
pages' text; the canvas's nodes as markdown), so what reads or writes a file as a note must
ask here first.
"""

from __future__ import annotations

PDF_SUFFIX = ".pdf"
CANVAS_SUFFIX = ".canvas"


def is_pdf(path: str) -> bool:
    """Whether a path names a PDF."""
    return path.lower().endswith(PDF_SUFFIX)


def is_canvas(path: str) -> bool:
    """Whether a path names a JSON Canvas file."""
    return path.lower().endswith(CANVAS_SUFFIX)


def derived_text(path: str) -> bool:
    """Whether the index keeps a text made from the file rather than the file's own text."""
    return is_pdf(path) or is_canvas(path)


def kind_of(path: str) -> str:
    """The kind of file: "pdf", "canvas" or "note"."""
    return "pdf" if is_pdf(path) else "canvas" if is_canvas(path) else "note"
