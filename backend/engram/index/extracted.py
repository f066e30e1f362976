"""PDF text cached by file hash: what PDFium read once is never read again.

Before an update sends changed PDFs to the workers, each one's bytes are hashed (a read, no
parsing) and looked up in the cache; a hit is stored from the cache (a touched, renamed or
copied PDF, or every PDF of an `engram rebuild`, which keeps the cache). What the workers
extract is cached as it is stored. An unchanged PDF (same time and size) is not even hashed:
like a note, it costs the update one stat.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from engram.index.loader import Item, Loaded
from engram.index.record import pdf_record
from engram.store import extracts
from engram.vault import pdf
from engram.vault.kinds import is_pdf

HASH_CHUNK = 1 << 20


def split_cached(
    conn: Any, collection: str, items: list[Item], force: bool = False
) -> tuple[list[Loaded], list[Item]]:
    """(PDFs loaded from the cache, the items still to load); `force` skips the cache."""
    if force:
        return [], items
    hits: list[Loaded] = []
    rest: list[Item] = []
    for item in items:
        path, rel, size, mtime_ns = item
        sha = _file_hash(path) if is_pdf(rel) and size <= pdf.MAX_BYTES else None
        cached = extracts.get(conn, sha, pdf.EXTRACTOR) if sha else None
        if sha is None or cached is None:
            rest.append(item)
            continue
        text = pdf.PdfText(
            cached.pages, cached.outline, cached.page_count, cached.meta, cached.warnings
        )
        record = pdf_record(collection, rel, mtime_ns, size, sha, text)
        hits.append(Loaded(rel, sha, record, text.warnings))
    return hits, rest


def remember(conn: Any, loaded: Loaded) -> None:
    """Cache the text a worker extracted from a PDF."""
    text = loaded.extract
    if text is not None and loaded.sha256:
        extracts.put(
            conn,
            loaded.sha256,
            pdf.EXTRACTOR,
            extracts.Extract(text.pages, text.outline, text.page_count, text.meta, text.warnings),
        )


def _file_hash(path: str) -> str | None:
    """sha256 of a file's bytes, None when it cannot be read (the worker will say why)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        try:
            while chunk := fh.read(HASH_CHUNK):
                digest.update(chunk)
        except OSError:
            return None
    return digest.hexdigest()
