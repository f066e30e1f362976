"""Parse one markdown note: frontmatter, title, headings, links, tags, fields, block ids.

markdown-it-py finds the block structure (so nothing inside code fences, math blocks or HTML
counts); inline constructs are read from the inline tokens' text with inline code spans blanked
out. Every line number is 1-based and counts from the top of the file, frontmatter included.
Parsing never raises on bad input: problems become warnings on the result.

Work is bounded for any input: frontmatter goes through `yamlload` (size, nesting, alias
expansion), the block parser reads at most MAX_STRUCTURE_LINES lines of the body (the rest is
still indexed as text), every pattern runs in linear time, and at most MAX_ITEMS links, tags,
properties, headings and block ids are kept per note. Going over a limit is a warning.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import yaml

from . import yamlload

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

MAX_STRUCTURE_LINES = 100_000  # markdown-it keeps ~5 tokens (~2 KB) per line of dense markdown
MAX_ITEMS = 10_000  # of each kind: links, tags, properties, headings, block ids, aliases


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
_BACKTICKS = re.compile(r"`+")
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MDLINK = re.compile(r"\[([^\[\]\n]*)\]\(\s*(<[^<>\n]+>|[^()\s]+)(?:\s+\"[^\"\n]*\")?\s*\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TAG = re.compile(r"#([^\s#!\"$%&'()*+,.:;<=>?@\[\]^`{|}~\\]+)")
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")
# values are taken greedily and stripped after: `[ \t]*(.*?)[ \t]*$` backtracks quadratically
_FIELD_LINE = re.compile(r"^[ \t]*(?:\*\*|__)?([\w][\w \-/.]*?)(?:\*\*|__)?::(.*)$")
_FIELD_INLINE_KEY = re.compile(r"[\[(]([\w][\w \-/.]*?)::")
_FIELD_INLINE_END = re.compile(r"[\])]")
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
    data, _, warning = _load_frontmatter(fm)
    return data, warning


def _load_frontmatter(fm: str) -> tuple[dict[str, Any], yamlload.Frontmatter, str | None]:
    empty = yamlload.Frontmatter({})
    try:
        loaded = yamlload.load_with_lines(fm)
    except yamlload.YamlLimitError as exc:
        return {}, empty, f"frontmatter not read: {exc}; body indexed without it"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (frontmatter line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        return {}, empty, f"broken frontmatter{where}: {problem}; body indexed without it"
    except Exception as exc:  # yaml's C loader can raise odd errors on hostile input
        return {}, empty, f"broken frontmatter: {type(exc).__name__}; body indexed without it"
    if loaded.data is None:
        return {}, empty, None
    if not isinstance(loaded.data, dict):
        return {}, empty, "frontmatter is not a key: value mapping; ignored"
    return {str(k): json_safe(v) for k, v in loaded.data.items()}, loaded, None


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
    fm = yamlload.Frontmatter({})
    if fm_text is not None:
        frontmatter, fm, warning = _load_frontmatter(fm_text)
        if warning:
            warnings.append(warning)
    structured = _first_lines(body, MAX_STRUCTURE_LINES)
    if len(structured) < len(body):
        warnings.append(
            f"over {MAX_STRUCTURE_LINES:,} lines: links, tags and headings read from the first "
            f"{MAX_STRUCTURE_LINES:,} only (all the text is searchable)"
        )
    try:
        tokens = _markdown().parse(structured)
    except Exception as exc:  # a parser bug must not lose the note
        warnings.append(f"markdown structure not parsed: {type(exc).__name__}")
        tokens = []

    headings, links, tags, fields, blocks, spans = _walk(tokens, body_line - 1)
    title = _title(frontmatter, headings, rel_path)
    aliases = _string_list(frontmatter.get("aliases", frontmatter.get("alias")))
    fm_tags = [t.lstrip("#") for t in _string_list(frontmatter.get("tags", frontmatter.get("tag")))]
    fm_tag_line = _fm_line(fm_text, "tag") if fm_text is not None else 1
    all_tags = [(t, fm_tag_line) for t in fm_tags if t] + tags
    if fm_text is not None:
        links.extend(_frontmatter_links(fm))
        fields[:0] = _frontmatter_fields(frontmatter, fm)
    kept = {
        name: _capped(items, name, warnings)
        for name, items in (
            ("aliases", aliases),
            ("headings", headings),
            ("links", links),
            ("tags", all_tags),
            ("properties", fields),
            ("block ids", blocks),
        )
    }
    return ParsedNote(
        title=title,
        body=body,
        body_line=body_line,
        frontmatter=frontmatter,
        aliases=kept["aliases"],
        headings=kept["headings"],
        links=kept["links"],
        tags=kept["tags"],
        fields=kept["properties"],
        blocks=kept["block ids"],
        spans=tuple(spans),
        warnings=tuple(warnings),
    )


def _walk(
    tokens: list[Any], offset: int
) -> tuple[
    list[Heading], list[Link], list[tuple[str, int]], list[Field], list[tuple[str, int]], list[Span]
]:
    """Headings, links, tags, inline fields, block ids and atomic spans of the body's markdown
    tokens (`offset`: the body's first line in the file, minus one)."""
    headings: list[Heading] = []
    links: list[Link] = []
    tags: list[tuple[str, int]] = []
    fields: list[Field] = []
    blocks: list[tuple[str, int]] = []
    spans: list[Span] = []
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
    return headings, links, tags, fields, blocks, spans


def plain_text(text: str, rel_path: str, why: str) -> ParsedNote:
    """A note taken as plain text, without parsing (its parse was stopped): the body is
    searchable, and there are no properties, links, tags or headings."""
    _, body, body_line = split_frontmatter(text)
    return ParsedNote(
        title=PurePosixPath(rel_path).stem,
        body=body,
        body_line=body_line,
        warnings=(f"indexed as plain text: {why}",),
    )


def _first_lines(text: str, n: int) -> str:
    """The first `n` lines of `text` (all of it when it is shorter)."""
    if text.count("\n") < n:
        return text
    end = -1
    for _ in range(n):
        end = text.index("\n", end + 1)
    return text[: end + 1]


def _capped(items: list[Any], name: str, warnings: list[str]) -> tuple[Any, ...]:
    """At most MAX_ITEMS of a kind (collectors stop at one more, to know it was over)."""
    if len(items) > MAX_ITEMS:
        warnings.append(f"over {MAX_ITEMS:,} {name}: the first {MAX_ITEMS:,} are kept")
    return tuple(items[:MAX_ITEMS])


def _blank_code_spans(content: str) -> str:
    """Replace inline code (and its backticks) with spaces so offsets stay put.

    A run of backticks opens a span that the next run of the same length closes (CommonMark);
    a run with no partner is literal. Runs are paired through a per-length index, so text
    full of unmatched backticks costs linear time, not a rescan per run.
    """
    if "`" not in content:
        return content
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(content)]
    by_length: dict[int, list[int]] = {}
    for i, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(i)
    out: list[str] = []
    done = 0  # content[:done] is in `out`
    i = 0
    while i < len(runs):
        start, end = runs[i]
        same = by_length[end - start]
        j = bisect_right(same, i)
        if j == len(same):
            i += 1
            continue
        close = runs[same[j]][1]
        out.append(content[done:start])
        out.append(re.sub(r"[^\n]", " ", content[start:close]))
        done = close
        i = same[j] + 1
    out.append(content[done:])
    return "".join(out)


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

    taken: list[tuple[int, int]] = []  # link spans, in text order
    if "[[" in content:
        for m in _WIKILINK.finditer(content):
            if len(links) > MAX_ITEMS:
                break
            taken.append(m.span())
            link = wikilink(m.group(1), embed=embed_at(m.start()), line=line_of(m.start()))
            if link:
                links.append(link)
    if "](" in content:
        wiki = list(taken)
        for m in _MDLINK.finditer(content):
            if len(links) > MAX_ITEMS:
                break
            if _inside(wiki, m.start()):
                continue
            taken.append(m.span())
            link = _markdown_link(m.group(2), m.group(1), embed_at(m.start()), line_of(m.start()))
            if link:
                links.append(link)
        taken = _merged(taken)
    if "#" in content:
        for m in _TAG.finditer(content):
            if len(tags) > MAX_ITEMS:
                break
            start = m.start()
            if start and not (content[start - 1].isspace() or content[start - 1] in "(,"):
                continue
            tag = m.group(1).rstrip("/")
            if tag and not tag.isdigit() and not _inside(taken, start):
                tags.append((tag, line_of(m.start())))
    if "::" in content:
        _scan_fields(content, line0, fields)
    if "^" in content and len(blocks) <= MAX_ITEMS:
        last = content.rstrip("\n").rsplit("\n", 1)[-1]
        block = _BLOCK_ID.search(last)
        if block:
            blocks.append((block.group(1), line0 + content.rstrip("\n").count("\n")))


def _scan_fields(content: str, line0: int, fields: list[Field]) -> None:
    """Dataview inline fields: `key:: value` lines and `[key:: value]` within a line."""
    for i, text_line in enumerate(content.split("\n")):
        if "::" not in text_line or len(fields) > MAX_ITEMS:
            continue
        full = _FIELD_LINE.match(text_line)
        if full and "[" not in full.group(1):
            value = full.group(2).strip(" \t")
            fields.append(Field(full.group(1).strip(), value, line0 + i, "inline"))
            continue
        fields.extend(_inline_fields(text_line, line0 + i))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans with overlapping ones joined (a markdown link can wrap a wikilink)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    """Is `pos` inside one of the sorted, non-overlapping `spans`? (binary search: a note can
    hold thousands of links, and each tag and markdown link is checked against them)"""
    i = bisect_right(spans, (pos, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= pos < spans[i][1]


def _inline_fields(text_line: str, line: int) -> list[Field]:
    """Dataview `[key:: value]` / `(key:: value)` fields of one line: each value runs to the
    first `]` or `)` after its key (found by binary search, so a line of unclosed fields
    costs linear time)."""
    ends = [m.start() for m in _FIELD_INLINE_END.finditer(text_line)]
    out: list[Field] = []
    pos = 0
    while len(out) <= MAX_ITEMS:
        m = _FIELD_INLINE_KEY.search(text_line, pos)
        if m is None:
            break
        i = bisect_left(ends, m.end())
        if i == len(ends):
            break  # no closing bracket after this key, so none after any later key either
        value = text_line[m.end() : ends[i]].strip(" \t")
        out.append(Field(m.group(1).strip(), value, line, "inline"))
        pos = ends[i] + 1
    return out


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


def _fm_line(fm_text: str, needle: str) -> int:
    """Line of `needle` in the file, counting the opening `---` as line 1."""
    pos = fm_text.find(needle)
    return 2 + fm_text.count("\n", 0, pos) if pos >= 0 else 1


def _frontmatter_links(fm: yamlload.Frontmatter) -> list[Link]:
    out: list[Link] = []
    for text, start in fm.link_values:
        for m in _WIKILINK.finditer(text):
            if len(out) > MAX_ITEMS:
                return out
            # a multi-line value is a block scalar (`|`): its lines follow the indicator's
            within = 1 + text.count("\n", 0, m.start()) if "\n" in text else 0
            link = wikilink(m.group(1), embed=False, line=2 + start + within, kind="frontmatter")
            if link:
                out.append(link)
    return out


def _frontmatter_fields(frontmatter: dict[str, Any], fm: yamlload.Frontmatter) -> list[Field]:
    out: list[Field] = []
    for key, value in frontmatter.items():
        key_line = fm.key_lines.get(key)
        line = 1 if key_line is None else 2 + key_line
        values = value if isinstance(value, list) else [value]
        for v in values:
            if len(out) > MAX_ITEMS:
                return out
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
