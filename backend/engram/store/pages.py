"""How a paged document (a PDF) keeps its pages in its stored text: one text, the pages joined
by a line holding a lone form feed. A passage, snippet or line then knows its page by counting
form feeds before it, and no offset or line number needs a table of its own. Pure functions.
"""

from __future__ import annotations

PAGE_BREAK = "\n\f\n"
PAGED_SUFFIXES = (".pdf",)


def is_paged(path: str) -> bool:
    """Whether a document's text is made of pages (a PDF)."""
    return path.lower().endswith(PAGED_SUFFIXES)


def join_pages(pages: tuple[str, ...] | list[str]) -> str:
    """The stored text of these pages (form feeds inside a page become spaces)."""
    return PAGE_BREAK.join(p.replace("\f", " ") for p in pages)


def page_at(text: str, offset: int) -> int:
    """The 1-based page holding character `offset` of a paged text."""
    return text.count("\f", 0, max(0, offset)) + 1


def page_of_line(text: str, line: int) -> int:
    """The 1-based page holding 1-based `line` of a paged text."""
    pos = 0
    for _ in range(max(0, line - 1)):
        nxt = text.find("\n", pos)
        if nxt < 0:
            break
        pos = nxt + 1
    return page_at(text, pos)


def page_count(text: str) -> int:
    """How many pages a paged text holds."""
    return text.count("\f") + 1


def page_span(text: str, page: int) -> tuple[int, int, int] | None:
    """(start, end, first line) of a page's text within a paged text; None when there is
    no such page."""
    if page < 1:
        return None
    start = 0
    for _ in range(page - 1):
        found = text.find(PAGE_BREAK, start)
        if found < 0:
            return None
        start = found + len(PAGE_BREAK)
    end = text.find(PAGE_BREAK, start)
    end = len(text) if end < 0 else end
    return start, end, text.count("\n", 0, start) + 1


def readable(text: str) -> str:
    """A paged text for reading: each page break an empty line (line numbers unchanged)."""
    return text.replace("\f", "")
