"""Pure text edits of a note: append, prepend, sections under a heading, find/replace.

Each function takes the note's text and returns the new text; nothing here reads or writes a
file. The note's line ending (LF or CRLF) is kept for inserted text. Headings are found with
the parser (a `# line` inside a code fence is not a heading).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from engram.errors import InvalidInputError, NotFoundError

from .parse import Heading, parse_note, split_frontmatter
from .resolve import normalize_heading

REGEX_TIMEOUT = 2.0  # seconds; a pathological pattern must not hang the writer
_HEADING_ARG = re.compile(r"^(#{1,6})\s+(.*)$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*\r?\n?$")


def newline_of(text: str) -> str:
    """The note's line ending: CRLF when its first line break is one, else LF."""
    at = text.find("\n")
    return "\r\n" if at > 0 and text[at - 1] == "\r" else "\n"


def _lines(content: str, nl: str) -> str:
    """Inserted text with the note's line endings and exactly one final line break."""
    body = content.replace("\r\n", "\n").rstrip("\n")
    return body.replace("\n", nl) + nl


def append(text: str, content: str) -> str:
    """`content` added at the end of the note, on its own line(s)."""
    nl = newline_of(text)
    if not text:
        return _lines(content, nl)
    sep = "" if text.endswith("\n") else nl
    return text + sep + _lines(content, nl)


def prepend(text: str, content: str) -> str:
    """`content` added at the top of the body: after the frontmatter, never above it."""
    nl = newline_of(text)
    fm, body, _ = split_frontmatter(text)
    head = text[: len(text) - len(body)] if fm is not None else ""
    return head + _lines(content, nl) + body


@dataclass(frozen=True)
class Section:
    """A heading and the lines it owns: [body_start, end) as 0-based line indexes."""

    heading: Heading
    body_start: int
    end: int


def find_section(text: str, heading: str) -> Section:
    """The section under `heading` (text, `## text`, or `Parent#Child`), ending before the
    next heading of the same or a higher level. Missing or ambiguous headings are errors."""
    headings = parse_note(text, "note.md").headings
    level, parts = _heading_query(heading)
    matches = _match(headings, parts, level)
    if not matches:
        names = [h.text for h in headings]
        close = difflib.get_close_matches(parts[-1], names, n=3, cutoff=0.5)
        raise NotFoundError(f"no heading {heading!r} in the note", close or names[:5])
    if len(matches) > 1:
        where = ", ".join(str(h.line) for h in matches)
        raise InvalidInputError(
            f"heading {heading!r} appears {len(matches)} times (lines {where})",
            "name its parent too, e.g. 'Parent#Child', or give the level, e.g. '## Child'",
        )
    found = matches[0]
    lines = split_lines(text)
    end = len(lines)
    for h in headings:
        if h.line > found.line and h.level <= found.level:
            end = h.line - 1
            break
    start = found.line
    if start < end and _SETEXT.match(lines[start]):
        start += 1  # `Title` over `=====`: the underline belongs to the heading
    return Section(found, start, end)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on LF only (as line numbers are counted)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _heading_query(heading: str) -> tuple[int | None, list[str]]:
    text = heading.strip()
    level = None
    m = _HEADING_ARG.match(text)
    if m:
        level, text = len(m.group(1)), m.group(2)
    parts = [p for p in (normalize_heading(x) for x in text.split("#")) if p]
    if not parts:
        raise InvalidInputError("a heading is required")
    return level, parts


def _match(headings: tuple[Heading, ...], parts: list[str], level: int | None) -> list[Heading]:
    """Headings named by the last part, each after its parents (earlier parts) in order."""
    out = []
    for i, h in enumerate(headings):
        if normalize_heading(h.text) != parts[-1] or (level is not None and h.level != level):
            continue
        pos = i
        ok = True
        for parent in reversed(parts[:-1]):
            pos = next(
                (
                    j
                    for j in range(pos - 1, -1, -1)
                    if headings[j].level < headings[pos].level
                    and normalize_heading(headings[j].text) == parent
                ),
                -1,
            )
            if pos < 0:
                ok = False
                break
        if ok:
            out.append(h)
    return out


def replace_section(text: str, heading: str, content: str) -> str:
    """The lines under `heading` replaced by `content` (the heading line stays)."""
    nl = newline_of(text)
    sec = find_section(text, heading)
    lines = split_lines(text)
    new = [_lines(content, nl)] if content.strip() else []
    if sec.end < len(lines):
        new.append(nl)  # keep a blank line before the next heading
    before = lines[: sec.body_start]
    if before and not before[-1].endswith("\n"):
        before[-1] += nl
    return "".join(before + new + lines[sec.end :])


def append_to_section(text: str, heading: str, content: str, create_level: int = 2) -> str:
    """`content` added at the end of the section under `heading` (before its trailing blank
    lines); the section is created at the end of the note when it does not exist."""
    nl = newline_of(text)
    try:
        sec = find_section(text, heading)
    except NotFoundError:
        level, parts = _heading_query(heading)
        title = heading.strip().lstrip("#").strip().split("#")[-1].strip()
        if len(parts) > 1 or not title:
            raise
        mark = "#" * (level or create_level)
        base = text if not text or text.endswith("\n") else text + nl
        blank = not base.strip() or base.endswith(nl + nl)
        return base + ("" if blank else nl) + f"{mark} {title}{nl}" + _lines(content, nl)
    lines = split_lines(text)
    at = sec.end
    while at > sec.body_start and not lines[at - 1].strip():
        at -= 1
    before = lines[:at]
    if before and not before[-1].endswith("\n"):
        before[-1] += nl
    return "".join([*before, _lines(content, nl), *lines[at:]])


def prepend_to_section(text: str, heading: str, content: str) -> str:
    """`content` added right under the line of `heading` (which must exist)."""
    nl = newline_of(text)
    sec = find_section(text, heading)
    lines = split_lines(text)
    before = lines[: sec.body_start]
    if before and not before[-1].endswith("\n"):
        before[-1] += nl
    return "".join([*before, _lines(content, nl), *lines[sec.body_start :]])


def find_replace(
    text: str,
    find: str,
    replacement: str,
    use_regex: bool = False,
    count: int = 0,
    limit: int | None = None,
) -> tuple[str, int]:
    """(new text, number of replacements): exact text, or a regular expression (multiline;
    `\\1` and `\\g<name>` in the replacement). `count` > 0 limits the replacements. A result
    longer than `limit` characters is refused before it is built (InvalidInputError)."""
    if not find:
        raise InvalidInputError("the text to find is empty")
    if not use_regex:
        found = text.count(find)
        n = found if count <= 0 else min(count, found)
        _bounded(len(text) + n * (len(replacement) - len(find)), limit)
        return (text.replace(find, replacement, n) if n else text), n
    import regex  # loaded only for a regular-expression edit (every command imports this module)

    try:
        pattern = regex.compile(find, regex.MULTILINE | regex.VERSION0)
    except regex.error as exc:
        raise InvalidInputError(f"invalid regular expression: {exc}") from None
    size = [len(text)]

    def expand(m: Any) -> str:
        out = str(m.expand(replacement))
        size[0] += len(out) - len(m.group(0))
        _bounded(size[0], limit)  # stops the substitution as soon as it grows too large
        return out

    try:
        new, n = pattern.subn(expand, text, count=max(count, 0), timeout=REGEX_TIMEOUT)
    except TimeoutError:
        raise InvalidInputError(
            f"the regular expression took over {REGEX_TIMEOUT:g}s on this note; simplify it"
        ) from None
    except (regex.error, IndexError) as exc:
        raise InvalidInputError(f"invalid replacement: {exc}") from None
    return new, n


def _bounded(size: int, limit: int | None) -> None:
    if limit is not None and size > limit:
        raise InvalidInputError(
            f"the edit would make the note {size:,} characters long, over the limit of "
            f"{limit:,} (max_file_bytes)",
            "replace less at a time, or raise max_file_bytes in the config file",
        )
