"""The auto-linker: turn the first plain mention of a known note, alias or entity into a link.

Only prose is touched: markdown-it marks the block structure (code, math, HTML blocks,
headings and frontmatter are skipped) and regexes blank out the inline constructs that must
stay verbatim (code spans, math, links, URLs, HTML tags, tags, comments, block ids).
Names are found with a character trie over the lower-cased text: at each start the longest
name that ends on a word boundary is taken, then overlaps go to the longer name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@cache
def _markdown() -> MarkdownIt:
    """The block parser, built on first use (every command imports this module)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    return (
        MarkdownIt("commonmark", {"html": True})
        .enable("table")
        .use(dollarmath_plugin, double_inline=True)
        .disable("inline")
    )


_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n.*?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_NEWLINE = re.compile(r"\r\n?|\n")
_GLOBAL_SKIP = re.compile(r"%%.*?%%|<!--.*?-->", re.S)  # Obsidian and HTML comments
# Each alternative is tried from a given place once and stops where the same construct could
# start again (a wikilink at the next `[[`, a footnote at the next `[`), and one that may begin
# inside a run of its own characters (an e-mail, a URL scheme) starts only at the run's head or
# reads a bounded length: a line of thousands of unclosed `[[` or one long word is one pass,
# not a pass from every character.
_INLINE_SKIP = re.compile(
    r"""(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)             # code span
    | !?\[\[(?:[^\[\n]|\[(?!\[))*?\]\]               # wikilink / embed (no [[ inside)
    | !?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]            # [text] followed by (url) or [ref]
      (?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^\[\]\n]*\])
    | \[\^[^\[\]\n]*\]                               # footnote reference
    | <[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*>        # autolink
    | <[^<>\s@]+@[^<>\s]+>                           # e-mail autolink
    | </?[A-Za-z][^<>]*>                             # HTML tag
    | (?<![\w/])(?:[A-Za-z][A-Za-z0-9+.-]{0,31}://|www\.|mailto:)[^\s<>]*   # bare URL
    | (?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+       # bare e-mail
    | \$\$.+?\$\$                                    # inline display math
    | (?<![\\$])\$(?=[^\s$])(?:[^$\n\\]|\\.)+?(?<=[^\s\\])\$(?!\d)   # inline math
    | (?:(?<=\s)|(?<=^)|(?<=[(,]))\#[^\s#!"$%&'()*+,.:;<=>?@\[\]^`{|}~\\]+   # tag
    | (?<=\s)\^[A-Za-z0-9-]+[ \t]*$                  # block id
    """,
    re.S | re.M | re.X,
)
# Targets already linked; a Markdown link's destination is read by lookahead, so a wikilink
# inside it (`](x [[Note]]`) is still seen as one.
_EXISTING = re.compile(r"\[\[([^\]|#\n\\]*)|\]\(<?(?=([^)#>\s]*))")
_BAD_NAME = re.compile(r"[\[\]|\n\r]")
_BAD_TARGET = re.compile(r"[\[\]|#^\n\r]")
_KIND_RANK = {"note": 0, "alias": 1, "entity": 2}
_END = ""  # trie key marking the end of a name (never a text character)

# Scripts written without spaces between words: a name in them needs no word boundary.
_UNSPACED = (
    (0x0E00, 0x0EFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x2E80, 0x2FDF),
    (0x3040, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3FFFF),
)


@lru_cache(maxsize=4096)
def _is_word(char: str) -> bool:
    """A letter, digit, underscore or mark of a script that separates words with spaces."""
    if not (char.isalnum() or char == "_" or unicodedata.category(char).startswith("M")):
        return False
    code = ord(char)
    return not any(lo <= code <= hi for lo, hi in _UNSPACED)


def _lower(text: str) -> str:
    """Lower case with one character per character, so offsets stay valid."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _width(name: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in name)


def _base(target: str) -> str:
    last = unquote(target).strip().rsplit("/", 1)[-1].lower()
    return last[:-3] if last.endswith(".md") else last


@dataclass(frozen=True)
class Mention:
    """A name that may appear in text and the link target it stands for."""

    name: str
    target: str
    kind: str = "note"  # note | alias | entity (earlier wins when two share a name)

    def __post_init__(self) -> None:
        if self.kind not in _KIND_RANK:
            raise ValueError(f"mention kind must be one of {sorted(_KIND_RANK)}, not {self.kind!r}")


@dataclass(frozen=True)
class AutoLink:
    """One inserted link: the mention's span in the input text, its target and kind."""

    start: int
    end: int
    text: str
    target: str
    kind: str


@dataclass(frozen=True)
class AutolinkResult:
    """The new text and the links inserted into it (positions refer to the input)."""

    text: str
    links: tuple[AutoLink, ...]


class AutoLinker:
    """Compiled names of a vault; reuse one for many texts."""

    def __init__(self, mentions: Iterable[Mention], *, min_length: int = 3) -> None:
        chosen: dict[str, list[Mention]] = {}
        for m in mentions:
            name, target = m.name.strip(), m.target.strip()
            if not name or not target or _BAD_NAME.search(name) or _BAD_TARGET.search(target):
                continue
            if _width(name) < min_length:
                continue
            key = _lower(name)
            best = chosen.get(key)
            if best is None or _KIND_RANK[m.kind] < _KIND_RANK[best[0].kind]:
                chosen[key] = [Mention(name, target, m.kind)]
            elif _KIND_RANK[m.kind] == _KIND_RANK[best[0].kind]:
                best.append(Mention(name, target, m.kind))
        self.ambiguous: frozenset[str] = frozenset(
            ms[0].name for ms in chosen.values() if len({m.target.lower() for m in ms}) > 1
        )
        self._mentions: list[Mention] = []
        self._trie: dict[str, Any] = {}
        for key, ms in chosen.items():
            if ms[0].name in self.ambiguous:
                continue  # two notes claim this name: linking either would be a guess
            node = self._trie
            for char in key:
                node = node.setdefault(char, {})
            node[_END] = len(self._mentions)
            self._mentions.append(ms[0])

    @classmethod
    def for_vault(
        cls,
        notes: Iterable[tuple[str, Iterable[str]]],
        entities: Iterable[str] = (),
        *,
        min_length: int = 3,
    ) -> AutoLinker:
        """From (link target, aliases) per note, e.g. ("People/Ada", ["Ada"]), and entity names."""
        mentions: list[Mention] = []
        for target, aliases in notes:
            name = target.rsplit("/", 1)[-1]
            name = name[:-3] if name.lower().endswith(".md") else name
            target = target[:-3] if target.lower().endswith(".md") else target
            mentions.append(Mention(name, target, "note"))
            mentions.extend(Mention(alias, target, "alias") for alias in aliases)
        mentions.extend(Mention(e, e, "entity") for e in entities)
        return cls(mentions, min_length=min_length)

    def __len__(self) -> int:
        return len(self._mentions)

    def link(
        self, text: str, *, self_target: str | None = None, link_headings: bool = False
    ) -> AutolinkResult:
        """Link the first mention of each known name in `text` (skipping `self_target`)."""
        if not self._mentions or not text:
            return AutolinkResult(text, ())
        allowed, table = _prose(text, link_headings)
        low = _lower(text)
        found: list[tuple[int, int, int]] = []  # (start, end, mention index)
        for region in re.finditer(rb"\x01+", bytes(allowed)):
            found.extend(self._scan(text, low, region.start(), region.end()))
        taken = bytearray(len(text))
        kept: list[tuple[int, int, int]] = []
        for start, end, idx in sorted(found, key=lambda f: (f[0] - f[1], f[0])):
            if not any(taken[start:end]):
                taken[start:end] = b"\x01" * (end - start)
                kept.append((start, end, idx))
        skip = {_base(m.group(1) or m.group(2) or "") for m in _EXISTING.finditer(text)}
        if self_target:
            skip.add(_base(self_target))
        links: list[AutoLink] = []
        for start, end, idx in sorted(kept):
            mention = self._mentions[idx]
            base = _base(mention.target)
            if base in skip:
                continue
            skip.add(base)
            links.append(AutoLink(start, end, text[start:end], mention.target, mention.kind))
        return AutolinkResult(_render(text, links, table), tuple(links))

    def _scan(self, text: str, low: str, lo: int, hi: int) -> list[tuple[int, int, int]]:
        """Longest name starting at each position of text[lo:hi] that ends on a boundary."""
        root, out = self._trie, []
        for i in range(lo, hi):
            node = root.get(low[i])
            if node is None or (i > 0 and _is_word(text[i]) and _is_word(text[i - 1])):
                continue
            best, best_idx = -1, -1
            j = i + 1
            while True:
                idx = node.get(_END)
                if idx is not None and (
                    j >= len(text) or not _is_word(text[j - 1]) or not _is_word(text[j])
                ):
                    best, best_idx = j, idx
                if j >= hi:
                    break
                node = node.get(low[j])
                if node is None:
                    break
                j += 1
            if best > 0:
                out.append((i, best, best_idx))
        return out


def _prose(text: str, link_headings: bool) -> tuple[bytearray, bytearray]:
    """0/1 masks over `text`: characters that may be linked, characters inside tables."""
    allowed = bytearray(len(text))
    table = bytearray(len(text))
    fm = _FRONTMATTER.match(text)
    body_start = fm.end() if fm else 0
    line_starts = [0]  # markdown-it counts a line break as \r\n, \r or \n
    line_starts.extend(m.end() for m in _NEWLINE.finditer(text))
    first_line = len(_NEWLINE.findall(text, 0, body_start))
    try:
        tokens = _markdown().parse(text[body_start:])
    except Exception:  # a parser failure must not touch the note
        return allowed, table
    heading = in_table = False
    for tok in tokens:
        if tok.type == "heading_open":
            heading = True
        elif tok.type == "heading_close":
            heading = False
        elif tok.type == "table_open":
            in_table = True
        elif tok.type == "table_close":
            in_table = False
        elif tok.type == "inline" and tok.map and (link_headings or not heading):
            first, last = tok.map[0] + first_line, tok.map[1] + first_line
            start = line_starts[first]
            end = line_starts[last] if last < len(line_starts) else len(text)
            allowed[start:end] = b"\x01" * (end - start)
            if in_table:
                table[start:end] = b"\x01" * (end - start)
            for m in _INLINE_SKIP.finditer(text, start, end):
                allowed[m.start() : m.end()] = bytes(m.end() - m.start())
    for m in _GLOBAL_SKIP.finditer(text, body_start):
        allowed[m.start() : m.end()] = bytes(m.end() - m.start())
    return allowed, table


def _render(text: str, links: list[AutoLink], table: bytearray) -> str:
    out: list[str] = []
    pos = 0
    for link in links:
        out.append(text[pos : link.start])
        if link.text == link.target:
            out.append(f"[[{link.text}]]")
        else:
            pipe = "\\|" if table[link.start] else "|"
            out.append(f"[[{link.target}{pipe}{link.text}]]")
        pos = link.end
    out.append(text[pos:])
    return "".join(out)
