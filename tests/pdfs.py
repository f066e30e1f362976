"""PDFs made for tests, byte by byte: well-formed ones and hostile ones (no PDF library).

`pdf(pages)` writes one page per string (lines split on newlines) in Helvetica, with an
outline when asked; the hostile makers bend one part of that file: a cross-reference table
that points nowhere, a content stream that inflates to hundreds of megabytes, ten thousand
pages sharing one content stream, a page that is only a drawing (no text layer).
"""

from __future__ import annotations

import zlib


def _escape(text: str) -> bytes:
    raw = text.encode("latin-1", "replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _content(text: str) -> bytes:
    out = [b"BT /F1 12 Tf 72 720 Td 14 TL"]
    for line in text.split("\n"):
        out.append(b"(" + _escape(line) + b") Tj T*")
    out.append(b"ET")
    return b"\n".join(out)


def _stream(data: bytes, compress: bool = True) -> bytes:
    if compress:
        data = zlib.compress(data)
        head = b"<< /Length %d /Filter /FlateDecode >>" % len(data)
    else:
        head = b"<< /Length %d >>" % len(data)
    return head + b"\nstream\n" + data + b"\nendstream"


def _assemble(objects: list[bytes], root: int, xref: bool = True) -> bytes:
    """Objects numbered from 1, a cross-reference table, a trailer."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    if xref:
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\n" % (len(objects) + 1, root)
    out += b"startxref\n%d\n%%%%EOF\n" % start
    return bytes(out)


def pdf(
    pages: list[str],
    outline: list[tuple[str, int]] = (),  # type: ignore[assignment]
    contents: list[bytes] | None = None,
) -> bytes:
    """A PDF with one page per text (or per raw content stream in `contents`) and an
    outline of (title, 0-based page) entries."""
    streams = contents if contents is not None else [_content(p) for p in pages]
    n = len(streams)
    # 1 catalog, 2 pages, 3 font, then per page: page, content; then outline items
    first_page = 4
    objects: list[bytes] = [b"", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for i, stream in enumerate(streams):
        page_no = first_page + 2 * i
        kids.append(b"%d 0 R" % page_no)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font"
            b" << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page_no + 1)
        )
        objects.append(_stream(stream))
    outline_ref = b""
    if outline:
        top = len(objects) + 1
        items = list(range(top + 1, top + 1 + len(outline)))
        objects.append(
            b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>"
            % (items[0], items[-1], len(items))
        )
        for k, (title, page) in enumerate(outline):
            links = b""
            if k > 0:
                links += b" /Prev %d 0 R" % items[k - 1]
            if k + 1 < len(items):
                links += b" /Next %d 0 R" % items[k + 1]
            objects.append(
                b"<< /Title ("
                + _escape(title)
                + b") /Parent %d 0 R /Dest [%d 0 R /Fit]%s >>" % (top, first_page + 2 * page, links)
            )
        outline_ref = b" /Outlines %d 0 R" % top
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R" + outline_ref + b" >>"
    objects[1] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % n
    return _assemble(objects, 1)


def broken_xref(data: bytes) -> bytes:
    """The same PDF with every cross-reference offset pointing at the wrong place and the
    `startxref` pointer past the end (a reader must rebuild the table by scanning)."""
    head, _, tail = data.partition(b"xref\n")
    lines = tail.split(b"\n")
    bent = [
        b"%010d 00000 n " % (7 + i * 13) if line.endswith(b" n ") else line
        for i, line in enumerate(lines)
    ]
    out = head + b"xref\n" + b"\n".join(bent)
    return out.replace(b"startxref\n", b"startxref\n9").rstrip(b"\n") + b"\n"


def truncated(data: bytes) -> bytes:
    """The first half of a PDF: a file still being written."""
    return data[: len(data) // 2]


def inflating(megabytes: int, text: str = "Bomb page text") -> bytes:
    """A one-page PDF whose content stream inflates to `megabytes` MB of white space after
    a line of text (a decompression bomb, about 1,000 to 1). Made in a blink: the deflate
    block of one megabyte, flushed so it stands alone, is repeated."""
    chunk = b" " * (1 << 20)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the zlib frame is ours
    first = comp.compress(_content(text) + b"\n") + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(chunk) + comp.flush(zlib.Z_FULL_FLUSH)
    adler = zlib.adler32(_content(text) + b"\n")
    for _ in range(megabytes):
        adler = zlib.adler32(chunk, adler)
    body = b"\x78\xda" + first + block * megabytes + comp.flush() + adler.to_bytes(4, "big")
    stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body
    stream += b"\nendstream"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font"
        b" << /F1 3 0 R >> >> /Contents 5 0 R >>",
        stream,
    ]
    return _assemble(objects, 1)


def many_pages(count: int, text: str = "Same page again") -> bytes:
    """A PDF of `count` pages that all share one small content stream (a few bytes a page)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        _stream(_content(text)),
    ]
    first = len(objects) + 1
    for _ in range(count):
        objects.append(b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>")
    kids = b" ".join(b"%d 0 R" % (first + i) for i in range(count))
    objects[1] = (
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d /MediaBox [0 0 612 792]"
        b" /Resources << /Font << /F1 3 0 R >> >> >>" % count
    )
    return _assemble(objects, 1)


def drawing_only(pages: int = 2) -> bytes:
    """A PDF whose pages hold only a filled rectangle: no text layer (a scan would too)."""
    return pdf([""] * pages, contents=[b"0.5 g 72 72 400 600 re f"] * pages)
