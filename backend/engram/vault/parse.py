"""Parse one markdown note: frontmatter, title, headings, links, tags, fields, block ids.

markdown-it-py finds the block structure (so nothing inside code fences, math blocks or HTML
counts); inline constructs are read from the inline tokens' text with inline code spans blanked
out. Every line number is 1-based and counts from the top of the file, frontmatter included.
Parsing never raises on bad input: problems become warnings on the result.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import yaml
from frontmatter.default_handlers import YAMLHandler

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML = YAMLHandler()


@cache
def _markdown() -> MarkdownIt:
    """The block parser, built on first use: commands that never parse a note (a no-op
    `engram update`, a search) do not pay for importing it."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    return (
        MarkdownIt("commonmark", {"html": True})
        .enable("table")
        .use(dollarmath_plugin, double_inline=True)
        .disable("inline")  # inline syntax is read below, far faster than the full inline parser
    )


_FM_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_NEWLINE = re.compile("\n")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MDLINK = re.compile(r"\[([^\[\]\n]*)\]\(\s*(<[^<>\n]+>|[^()\s]+)(?:\s+\"[^\"\n]*\")?\s*\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TAG = re.compile(r"#([^\s#!\"$%&'()*+,.:;<=>?@\[\]^`{|}~\\]+)")
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")
_FIELD_LINE = re.compile(r"^[ \t]*(?:\*\*|__)?([\w][\w \-/.]*?)(?:\*\*|__)?::[ \t]*(.*?)[ \t]*$")
_FIELD_INLINE = re.compile(r"[\[(]([\w][\w \-/.]*?)::[ \t]*([^\])\n]*?)[ \t]*[\])]")
_ATOMIC_BLOCKS = {
    "fence": "code",
    "code_block": "code",
    "math_block": "math",
    "math_block_label": "math",
    "table_open": "table",
    "html_block": "html",
}


@dataclass(frozen=True)
class Heading:
    """A heading: level 1-6, its text as written, its line."""

    level: int
    text: str
    line: int


@dataclass(frozen=True)
class Link:
    """A link as written in a note (resolution to a file happens in the graph layer)."""

    kind: str  # "wikilink" | "markdown" | "frontmatter"
    target: str  # note or file as written, without #heading / |alias ("" = this note)
    heading: str | None
    block: str | None
    display: str | None
    embed: bool
    line: int


@dataclass(frozen=True)
class Field:
    """A property: frontmatter key or Dataview inline `key:: value`."""

    key: str
    value: str
    line: int
    source: str  # "frontmatter" | "inline"


@dataclass(frozen=True)
class Span:
    """A block that must never be split (code fence, math, table, HTML), inclusive lines."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class ParsedNote:
    """Everything the index keeps from one note."""

    title: str
    body: str
    body_line: int  # line number of the body's first line
    frontmatter: dict[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    headings: tuple[Heading, ...] = ()
    links: tuple[Link, ...] = ()
    tags: tuple[tuple[str, int], ...] = ()
    fields: tuple[Field, ...] = ()
    blocks: tuple[tuple[str, int], ...] = ()
    spans: tuple[Span, ...] = ()
    warnings: tuple[str, ...] = ()


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(frontmatter YAML or None, body, line number where the body starts)."""
    opening = _FM_OPEN.match(text)
    if not opening:
        return None, text, 1
    closing = _FM_CLOSE.search(text, opening.end())
    if not closing:
        return None, text, 1
    fm = text[opening.end() : closing.start()]
    body = text[closing.end() :]
    return fm, body, text.count("\n", 0, closing.end()) + 1


def load_yaml(fm: str) -> tuple[dict[str, Any], str | None]:
    """Parsed frontmatter as a JSON-safe dict, or ({}, warning) when it is not a valid mapping."""
    try:
        data = _YAML.load(fm, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (frontmatter line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        return {}, f"broken frontmatter{where}: {problem}; body indexed without it"
    except Exception as exc:  # yaml's C loader can raise odd errors on hostile input
        return {}, f"broken frontmatter: {type(exc).__name__}; body indexed without it"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not a key: value mapping; ignored"
    return {str(k): json_safe(v) for k, v in data.items()}, None


def json_safe(value: Any) -> Any:
    """YAML values (dates, sets, nested) as plain JSON types."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        if isinstance(value, float) and value != value:  # NaN is not JSON
            return None
        return value
    return str(value)


def parse_note(text: str, rel_path: str) -> ParsedNote:
    """Parse a note's text; `rel_path` supplies the title when nothing better exists."""
    warnings: list[str] = []
    fm_text, body, body_line = split_frontmatter(text)
    frontmatter: dict[str, Any] = {}
    if fm_text is not None:
        frontmatter, warning = load_yaml(fm_text)
        if warning:
            warnings.append(warning)
    try:
        tokens = _markdown().parse(body)
    except Exception as exc:  # a parser bug must not lose the note
        warnings.append(f"markdown structure not parsed: {type(exc).__name__}")
        tokens = []

    headings: list[Heading] = []
    links: list[Link] = []
    tags: list[tuple[str, int]] = []
    fields: list[Field] = []
    blocks: list[tuple[str, int]] = []
    spans: list[Span] = []
    offset = body_line - 1
    pending_heading: int | None = None
    for tok in tokens:
        if tok.type in _ATOMIC_BLOCKS and tok.map:
            spans.append(
                Span(_ATOMIC_BLOCKS[tok.type], tok.map[0] + 1 + offset, tok.map[1] + offset)
            )
        elif tok.type == "heading_open":
            pending_heading = int(tok.tag[1:])
        elif tok.type == "inline" and tok.map:
            line0 = tok.map[0] + 1 + offset
            content = _blank_code_spans(tok.content)
            if pending_heading is not None:
                headings.append(Heading(pending_heading, tok.content.strip(), line0))
                pending_heading = None
            _scan_inline(content, line0, links, tags, fields, blocks)

    title = _title(frontmatter, headings, rel_path)
    aliases = _string_list(frontmatter.get("aliases", frontmatter.get("alias")))
    fm_tags = [t.lstrip("#") for t in _string_list(frontmatter.get("tags", frontmatter.get("tag")))]
    fm_tag_line = _fm_line(fm_text, "tag") if fm_text is not None else 1
    all_tags = [(t, fm_tag_line) for t in fm_tags if t] + tags
    if fm_text is not None:
        links.extend(_frontmatter_links(frontmatter, fm_text))
        fields[:0] = _frontmatter_fields(frontmatter, fm_text)
    return ParsedNote(
        title=title,
        body=body,
        body_line=body_line,
        frontmatter=frontmatter,
        aliases=tuple(aliases),
        headings=tuple(headings),
        links=tuple(links),
        tags=tuple(all_tags),
        fields=tuple(fields),
        blocks=tuple(blocks),
        spans=tuple(spans),
        warnings=tuple(warnings),
    )


def _blank_code_spans(content: str) -> str:
    """Replace inline code (and its backticks) with spaces so offsets stay put."""
    if "`" not in content:
        return content
    return _CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), content)


def _scan_inline(
    content: str,
    line0: int,
    links: list[Link],
    tags: list[tuple[str, int]],
    fields: list[Field],
    blocks: list[tuple[str, int]],
) -> None:
    newlines: list[int] | None = None

    def line_of(pos: int) -> int:
        nonlocal newlines
        if "\n" not in content:
            return line0
        if newlines is None:
            newlines = [m.start() for m in _NEWLINE.finditer(content)]
        return line0 + bisect_left(newlines, pos)

    def embed_at(pos: int) -> bool:
        return pos > 0 and content[pos - 1] == "!"

    taken: list[tuple[int, int]] = []
    if "[[" in content:
        for m in _WIKILINK.finditer(content):
            taken.append(m.span())
            link = wikilink(m.group(1), embed=embed_at(m.start()), line=line_of(m.start()))
            if link:
                links.append(link)
    if "](" in content:
        for m in _MDLINK.finditer(content):
            if any(s <= m.start() < e for s, e in taken):
                continue
            taken.append(m.span())
            link = _markdown_link(m.group(2), m.group(1), embed_at(m.start()), line_of(m.start()))
            if link:
                links.append(link)
    if "#" in content:
        for m in _TAG.finditer(content):
            start = m.start()
            if start and not (content[start - 1].isspace() or content[start - 1] in "(,"):
                continue
            tag = m.group(1).rstrip("/")
            if tag and not tag.isdigit() and not any(s <= start < e for s, e in taken):
                tags.append((tag, line_of(m.start())))
    if "::" in content:
        for i, text_line in enumerate(content.split("\n")):
            if "::" not in text_line:
                continue
            full = _FIELD_LINE.match(text_line)
            if full and "[" not in full.group(1):
                fields.append(Field(full.group(1).strip(), full.group(2), line0 + i, "inline"))
                continue
            for m in _FIELD_INLINE.finditer(text_line):
                fields.append(Field(m.group(1).strip(), m.group(2), line0 + i, "inline"))
    if "^" in content:
        last = content.rstrip("\n").rsplit("\n", 1)[-1]
        block = _BLOCK_ID.search(last)
        if block:
            blocks.append((block.group(1), line0 + content.rstrip("\n").count("\n")))


def wikilink(inner: str, embed: bool, line: int, kind: str = "wikilink") -> Link | None:
    """A Link from the text between `[[` and `]]` (escaped `\\|` pipes in tables allowed)."""
    inner = inner.replace("\\|", "|")
    target, _, display = inner.partition("|")
    target, _, sub = target.partition("#")
    target = target.strip()
    heading, block = _subpath(sub)
    if not target and not sub:
        return None
    return Link(kind, target, heading, block, display.strip() or None, embed, line)


def _subpath(sub: str) -> tuple[str | None, str | None]:
    sub = sub.strip()
    if not sub:
        return None, None
    if sub.startswith("^"):
        return None, sub[1:] or None
    return sub, None


def _markdown_link(raw: str, text: str, embed: bool, line: int) -> Link | None:
    target = raw[1:-1] if raw.startswith("<") else raw
    if _SCHEME.match(target) or target.startswith("#"):
        return None  # URLs and in-page anchors are not note links
    path, _, sub = target.partition("#")
    path = unquote(path).strip()
    if not path:
        return None
    heading, block = _subpath(unquote(sub))
    return Link("markdown", path, heading, block, text.strip() or None, embed, line)


def _title(frontmatter: dict[str, Any], headings: list[Heading], rel_path: str) -> str:
    fm_title = frontmatter.get("title")
    if isinstance(fm_title, str | int | float) and str(fm_title).strip():
        return str(fm_title).strip()
    for h in headings:
        if h.level == 1 and h.text:
            return h.text
    return PurePosixPath(rel_path).stem


def _string_list(value: Any) -> list[str]:
    """Frontmatter list-or-string (`a, b` or `[a, b]`) as a list of non-empty strings."""
    if value is None:
        return []
    if isinstance(value, str):
        items: list[Any] = [p for p in re.split(r"[,\n]", value)]
    elif isinstance(value, list):
        items = value
    else:
        items = [value]
    return [str(v).strip() for v in items if v is not None and str(v).strip()]


def _walk_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _walk_strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _walk_strings(v)


def _fm_line(fm_text: str, needle: str) -> int:
    """Line of `needle` in the file, counting the opening `---` as line 1."""
    pos = fm_text.find(needle)
    return 2 + fm_text.count("\n", 0, pos) if pos >= 0 else 1


def _frontmatter_links(frontmatter: dict[str, Any], fm_text: str) -> list[Link]:
    out = []
    for text in _walk_strings(frontmatter):
        for m in _WIKILINK.finditer(text):
            line = _fm_line(fm_text, m.group(0))
            link = wikilink(m.group(1), embed=False, line=line, kind="frontmatter")
            if link:
                out.append(link)
    return out


def _frontmatter_fields(frontmatter: dict[str, Any], fm_text: str) -> list[Field]:
    out = []
    for key, value in frontmatter.items():
        line = _fm_line(fm_text, f"{key}:")
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, dict | list):
                v = json.dumps(v, ensure_ascii=False)
            out.append(
                Field(
                    key,
                    "" if v is None else str(v).lower() if isinstance(v, bool) else str(v),
                    line,
                    "frontmatter",
                )
            )
    return out
