"""Output formats for results and documents: human, json, csv, md, xml, files.

Text formats escape control characters in every field (a file named `\\x1b]0;evil\\x07.md`
must not retitle the terminal listing it); json escapes them its own way, losslessly.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from engram.codec import encode
from engram.printable import json_safe, printable
from engram.service import Document, SearchResult

FORMATS = ("human", "json", "csv", "md", "xml", "files")
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

BOLD, DIM, YELLOW, CYAN, RESET = "\x1b[1m", "\x1b[2m", "\x1b[33m", "\x1b[36m", "\x1b[0m"


def _highlight(text: str, marks: Sequence[tuple[int, int]], start: str, end: str) -> str:
    """`text` escaped, with the marked spans between `start` and `end` (escaped piece by
    piece: the marks are offsets into the raw text)."""
    out, last = [], 0
    for s, e in sorted(marks):
        if s < last or e <= s:
            continue
        out += [printable(text[last:s]), start, printable(text[s:e]), end]
        last = e
    out.append(printable(text[last:]))
    return "".join(out)


def _text(text: str) -> str:
    """A note's text for a terminal: lines and tabs kept, other control characters escaped."""
    return printable(text, multiline=True)


def _numbered(text: str, first: int) -> str:
    lines = text.split("\n")
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{first + i:>{width}}: {line}" for i, line in enumerate(lines))


def render_results(
    results: Sequence[SearchResult],
    fmt: str = "human",
    color: bool = False,
    line_numbers: bool = False,
) -> str:
    """Results in one of FORMATS."""
    if fmt == "json":
        return json_safe(json.dumps(encode(results), ensure_ascii=False, indent=2))
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["docid", "score", "collection", "path", "title", "line", "context", "snippet"])
        for r in results:
            w.writerow(
                [
                    r.docid,
                    f"{r.score:.4f}",
                    printable(r.collection),
                    printable(r.path),
                    printable(r.title),
                    r.line,
                    printable(r.context or ""),
                    _text(r.body if r.body is not None else r.snippet),
                ]
            )
        return buf.getvalue().rstrip("\n")
    if fmt == "files":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for r in results:
            where = printable(f"{r.collection}/{r.path}")
            w.writerow([f"#{r.docid}", f"{r.score:.4f}", where, printable(r.context or "")])
        return buf.getvalue().rstrip("\n")
    if fmt == "xml":
        root = ET.Element("results")
        for r in results:
            el = ET.SubElement(
                root,
                "result",
                docid=r.docid,
                score=f"{r.score:.4f}",
                collection=_xml(r.collection),
                path=_xml(r.path),
                line=str(r.line),
            )
            ET.SubElement(el, "title").text = _xml(r.title)
            if r.context:
                ET.SubElement(el, "context").text = _xml(r.context)
            tag, text = ("body", r.body) if r.body is not None else ("snippet", r.snippet)
            ET.SubElement(el, tag).text = _xml(text)
        return ET.tostring(root, encoding="unicode", xml_declaration=True)
    if fmt == "md":
        return "\n\n".join(_md_result(r, line_numbers) for r in results)
    return "\n\n".join(_human_result(r, color, line_numbers) for r in results)


def _xml(text: str) -> str:
    return _XML_BAD.sub("", text)


def _md_result(r: SearchResult, line_numbers: bool) -> str:
    where = printable(f"{r.collection}/{r.path}")
    place = f"page {r.page}" if r.page is not None else f"line {r.line}"
    head = f"## {printable(r.title)}\n\n- path: `{where}` ({place})\n"
    head += f"- docid: `#{r.docid}`\n- score: {r.score:.2f}\n"
    if r.context:
        head += f"- context: {printable(r.context)}\n"
    if r.body is not None:
        body = _numbered(_text(r.body), 1) if line_numbers else _text(r.body)
        return head + "\n" + body
    return head + "\n> " + _highlight(r.snippet, r.highlights, "**", "**")


def _human_result(r: SearchResult, color: bool, line_numbers: bool) -> str:
    b, d, y, c, x = (BOLD, DIM, YELLOW, CYAN, RESET) if color else ("",) * 5
    lines = [
        f"{c}{printable(r.where)}{x} {d}#{r.docid}{x}  {b}{r.score:.2f}{x}",
        f"{b}{printable(r.title)}{x}",
    ]
    if r.context:
        lines.append(f"{d}{printable(r.context)}{x}")
    if r.body is not None:
        lines.append(_numbered(_text(r.body), 1) if line_numbers else _text(r.body))
    else:
        lines.append(_highlight(r.snippet, r.highlights, y + b, x))  # no colour: no marks
    if r.explain:
        lines.append(_explain_line(r.explain, d, x))
    for p in r.passages[1:]:
        place = f"#page={p.page}" if p.page is not None else f":{p.line}"
        lines.append(f"  {d}{place}{x} {_highlight(p.snippet, p.highlights, y + b, x)}")
    return "\n".join(lines)


def _explain_line(e: dict[str, Any], dim: str, reset: str) -> str:
    lists: dict[str, dict[str, Any]] = e.get("lists") or {}
    parts = [f"{name} #{v['rank']} ({v['score']})" for name, v in lists.items()]
    tail = f"rrf {e['rrf']} + bonus {e['bonus']} -> {e['retrieval']}"
    if e.get("rerank") is not None:
        tail += (
            f"; rerank {e['rerank']} blended at {e['retrievalWeight']} retrieval"
            f" (fused rank {e['rrfRank']})"
        )
    return f"{dim}  explain: {', '.join(parts)}; {tail} = {e['final']}{reset}"


def render_explain(stages: dict[str, str], expansions: tuple[str, ...]) -> str:
    """The pipeline's stages for --explain (printed once, before the results)."""
    lines = [f"stage {name}: {printable(what)}" for name, what in stages.items()]
    lines += [f"  expansion {i}: {printable(text)}" for i, text in enumerate(expansions, 1)]
    return "\n".join(lines)


def render_documents(
    documents: Sequence[Document], fmt: str = "human", line_numbers: bool = False
) -> str:
    """Documents from get / multi-get in one of FORMATS."""
    if fmt == "json":
        return json_safe(json.dumps(encode(documents), ensure_ascii=False, indent=2))
    if fmt in ("csv", "files"):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        if fmt == "csv":
            w.writerow(["docid", "collection", "path", "title", "from_line", "note", "text"])
        for doc in documents:
            if fmt == "csv":
                w.writerow(
                    [
                        doc.docid,
                        printable(doc.collection),
                        printable(doc.path),
                        printable(doc.title),
                        doc.from_line,
                        printable(doc.note or ""),
                        _text(doc.text),
                    ]
                )
            else:
                where = printable(f"{doc.collection}/{doc.path}")
                w.writerow([f"#{doc.docid}", where, printable(doc.context or "")])
        return buf.getvalue().rstrip("\n")
    if fmt == "xml":
        return _documents_xml(documents)
    parts = []
    for doc in documents:
        text = _text(doc.text)
        text = _numbered(text, doc.from_line) if line_numbers and text else text
        where, note = printable(f"{doc.collection}/{doc.path}"), printable(doc.note or "")
        if fmt == "md":
            parts.append(
                f"## {printable(doc.title)}\n\n`{where}` `#{doc.docid}`"
                + (f"\n\n> {note}" if note else "")
                + f"\n\n{text}"
            )
        elif len(documents) == 1 and not note:
            parts.append(text)
        else:
            header = f"==> {where} #{doc.docid} <=="
            parts.append(header + (f"\n[{note}]" if note else "") + f"\n{text}")
    return "\n\n".join(parts)


def _documents_xml(documents: Sequence[Document]) -> str:
    """Documents as one XML file (get / multi-get --xml)."""
    root = ET.Element("documents")
    for doc in documents:
        el = ET.SubElement(
            root,
            "document",
            docid=doc.docid,
            collection=_xml(doc.collection),
            path=_xml(doc.path),
            fromLine=str(doc.from_line),
        )
        ET.SubElement(el, "title").text = _xml(doc.title)
        if doc.note:
            ET.SubElement(el, "note").text = _xml(doc.note)
        ET.SubElement(el, "text").text = _xml(doc.text)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
