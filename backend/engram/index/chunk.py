"""Heading-aware chunking of one note for embedding (pure: no model, no I/O).

A chunk never crosses a heading, never splits a code fence, `$$` math block, table or HTML
block, and never includes frontmatter. Inside a section, paragraphs are packed up to the token
budget; a paragraph that does not fit is split at sentences (then words, then characters), and
the next chunk repeats about 15% of the previous one's tail. An atomic block larger than the
budget becomes a chunk of its own: its offsets cover the whole block, its `embed_text` is cut
to what the model reads. Offsets are `str` indices into the full file text, so
`text[chunk.start:chunk.end] == chunk.text`; lines are 1-based file lines.

Tokens are counted per sentence-sized piece (not per character), with the caller's
`count_tokens`, and each chunk once more for its exact count.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from engram.vault.parse import ParsedNote

CountTokens = Callable[[str], int]
_SENTENCE_END = re.compile(r"(?<=[.!?。！？;:])\s+")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_PATH_SEP = " > "
_MAX_PREFIX_CHARS = 300


@dataclass(frozen=True)
class Chunk:
    """One passage to embed, located exactly in the file."""

    seq: int
    text: str  # text[start:end] of the file
    embed_text: str  # title + heading path + text (cut to the model's limit if `truncated`)
    heading_path: tuple[str, ...]
    start: int  # str offset in the file text
    end: int
    start_line: int  # 1-based, inclusive
    end_line: int
    token_count: int  # count_tokens(embed_text)
    text_hash: str  # sha256 of embed_text: unchanged sections are never re-embedded
    truncated: bool = False


@dataclass(frozen=True)
class _Piece:
    start: int
    end: int
    tokens: int
    atomic: bool = False
    heading: bool = False  # a heading line: embedded through the prefix's path, not again


@dataclass(frozen=True)
class _Block:
    kind: str  # "heading" | "atomic" | "para"
    first: int  # 1-based file lines, inclusive
    last: int


class _Lines:
    """Line <-> offset arithmetic over the file text ("\\n", "\\r\\n" and lone "\\r" safe)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\n|\r", text)]

    def __len__(self) -> int:
        return len(self.starts)

    def span(self, line: int) -> tuple[int, int]:
        """(start, end) of a 1-based line, without its line break."""
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        while end > start and self.text[end - 1] in "\r\n":
            end -= 1
        return start, end

    def line_of(self, offset: int) -> int:
        """1-based line holding `offset`."""
        return bisect.bisect_right(self.starts, offset)


def chunk_note(
    text: str,
    parsed: ParsedNote,
    count_tokens: CountTokens,
    max_tokens: int = 254,
    overlap: float = 0.15,
) -> list[Chunk]:
    """Chunks of the note's body; `max_tokens` bounds count_tokens(embed_text)."""
    if max_tokens < 16:
        raise ValueError("max_tokens must be at least 16")
    lines = _Lines(text)
    builder = _Builder(text, lines, parsed.title, count_tokens, max_tokens, overlap)
    carried: list[list[_Piece]] = []  # a heading with no content joins the next section
    last_path: tuple[str, ...] = ()
    for path, blocks in _sections(text, parsed, lines):
        budget = builder.budget(path)
        groups = carried + [_pieces(b, lines, count_tokens, budget) for b in blocks]
        if _is_heading_only(blocks):
            carried, last_path = groups, path
            continue
        carried = []
        builder.pack(path, groups)
    if carried:
        builder.pack(last_path, carried)
    return builder.chunks


def _is_heading_only(blocks: list[_Block]) -> bool:
    return all(b.kind == "heading" for b in blocks)


def _sections(
    text: str, parsed: ParsedNote, lines: _Lines
) -> Iterator[tuple[tuple[str, ...], list[_Block]]]:
    """(heading path, blocks) per section, in file order; frontmatter excluded."""
    first, last = parsed.body_line, len(lines)
    atomic: dict[int, int] = {}  # first line -> last line of each atomic block
    for span in sorted(parsed.spans, key=lambda s: (s.start, -s.end)):
        if span.end >= span.start >= first and not any(
            a <= span.start <= b for a, b in atomic.items()
        ):
            atomic[span.start] = min(span.end, last)
    headings = {h.line: h for h in parsed.headings if h.line >= first}
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    blocks: list[_Block] = []
    line = first
    para_start: int | None = None

    def close_para(end: int) -> None:
        nonlocal para_start
        if para_start is not None:
            blocks.append(_Block("para", para_start, end))
            para_start = None

    while line <= last:
        if line in atomic:
            close_para(line - 1)
            blocks.append(_Block("atomic", line, atomic[line]))
            line = atomic[line] + 1
        elif line in headings:
            close_para(line - 1)
            if blocks:
                yield path, blocks
            heading = headings[line]
            stack = [(lvl, t) for lvl, t in stack if lvl < heading.level] + [
                (heading.level, heading.text)
            ]
            path = tuple(t for _, t in stack)
            end = line
            if line < last and _SETEXT.match(text[slice(*lines.span(line + 1))]):
                end = line + 1
            blocks = [_Block("heading", line, end)]
            line = end + 1
        else:
            start, stop = lines.span(line)
            if text[start:stop].strip():
                if para_start is None:
                    para_start = line
            else:
                close_para(line - 1)
            line += 1
    close_para(last)
    if blocks:
        yield path, blocks


def _pieces(block: _Block, lines: _Lines, count: CountTokens, budget: int) -> list[_Piece]:
    text = lines.text
    start, _ = lines.span(block.first)
    _, end = lines.span(block.last)
    while end > start and text[end - 1].isspace():
        end -= 1
    if block.kind == "atomic":
        return [_Piece(start, end, count(text[start:end]), atomic=True)]
    if block.kind == "heading":
        return [replace(p, heading=True) for p in _fit(text, start, end, count, budget)]
    out: list[_Piece] = []
    for line in range(block.first, block.last + 1):
        lo, hi = lines.span(line)
        cuts = [lo] + [m.end() for m in _SENTENCE_END.finditer(text, lo, hi)] + [hi]
        for a, b in itertools.pairwise(cuts):
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a:
                out.extend(_fit(text, a, b, count, budget))
    return out


def _fit(text: str, start: int, end: int, count: CountTokens, budget: int) -> list[_Piece]:
    """Split [start, end) until every piece fits the budget: at a space near the middle, else
    at the middle character."""
    tokens = count(text[start:end])
    if tokens <= budget or end - start < 2:
        return [_Piece(start, end, tokens)]
    mid = (start + end) // 2
    space = text.rfind(" ", start + 1, mid + 1)
    if space <= start:
        space = text.find(" ", mid, end - 1)
    cut = space if space > start else mid
    left, right = cut, cut
    while right < end and text[right] == " ":
        right += 1
    return _fit(text, start, left, count, budget) + _fit(text, right, end, count, budget)


class _Builder:
    """Packs pieces into chunks section by section, with overlap inside a section."""

    def __init__(
        self,
        text: str,
        lines: _Lines,
        title: str,
        count: CountTokens,
        max_tokens: int,
        overlap: float,
    ) -> None:
        self.text, self.lines, self.title, self.count = text, lines, title, count
        self.max_tokens, self.overlap = max_tokens, overlap
        self.chunks: list[Chunk] = []
        # path -> (prefix, its tokens, whether it names the section's own heading)
        self._prefixes: dict[tuple[str, ...], tuple[str, int, bool]] = {}

    def prefix(self, path: tuple[str, ...]) -> str:
        """Title and heading path, the context every chunk of a section is embedded with;
        shortened (last heading only, title only, nothing) to stay within half the limit."""
        if path not in self._prefixes:
            parts = list(path[1:] if path and path[0] == self.title else path)
            for candidate in (parts, parts[-1:], []):
                head = "\n".join(p for p in (self.title, _PATH_SEP.join(candidate)) if p)
                head = head[:_MAX_PREFIX_CHARS] + "\n" if head else ""
                tokens = self.count(head)
                if tokens <= self.max_tokens // 2:
                    break
            else:
                head, tokens, candidate = "", 0, []
            names = bool(path) and bool(head) and (bool(candidate) or path[-1] == self.title)
            self._prefixes[path] = (head, tokens, names)
        return self._prefixes[path][0]

    def names_heading(self, path: tuple[str, ...]) -> bool:
        """Whether the prefix of `path` holds its last heading (it may have been shortened)."""
        self.prefix(path)
        return self._prefixes[path][2]

    def budget(self, path: tuple[str, ...]) -> int:
        """Tokens left for the text once the prefix is counted."""
        self.prefix(path)
        return max(self.max_tokens - self._prefixes[path][1] - 1, self.max_tokens // 4)

    def pack(self, path: tuple[str, ...], groups: list[list[_Piece]]) -> None:
        """Greedy packing of blocks' pieces; a block that does not fit starts a new chunk when
        the current one is at least half full, else it is split; overlap carried between."""
        budget = self.budget(path)
        keep = int(budget * self.overlap)
        current: list[_Piece] = []
        fresh = False
        for group in groups:
            used = sum(p.tokens for p in current)
            if fresh and used + sum(p.tokens for p in group) > budget and used >= budget // 2:
                self.emit(path, current)
                current, fresh = self._tail(current, keep, budget - group[0].tokens), False
            for piece in group:
                used = sum(p.tokens for p in current)
                if piece.atomic and piece.tokens > budget:
                    if fresh:
                        self.emit(path, current)
                    self.emit(path, [piece])
                    current, fresh = [], False
                    continue
                if current and used + piece.tokens > budget:
                    if fresh:
                        self.emit(path, current)
                    current = self._tail(current, keep, budget - piece.tokens)
                current.append(piece)
                fresh = True
        if fresh:
            self.emit(path, current)

    @staticmethod
    def _tail(pieces: list[_Piece], keep: int, room: int) -> list[_Piece]:
        """Trailing prose pieces worth at most `keep` tokens (and fitting `room`)."""
        tail: list[_Piece] = []
        total = 0
        for piece in reversed(pieces):
            if piece.atomic or total + piece.tokens > min(keep, room):
                break
            tail.insert(0, piece)
            total += piece.tokens
        return tail

    def emit(self, path: tuple[str, ...], pieces: list[_Piece]) -> None:
        """Turn pieces into a Chunk (exact token count, truncated embed text if oversize)."""
        start, end = pieces[0].start, pieces[-1].end
        body = self.text[start:end]
        # the section's heading lines are in the prefix's path already: embedding them again
        # doubled a note's title ("Title\n# Title\n...") and outweighed what the text says
        prefix = self.prefix(path)
        first = next((p for p in pieces if not p.heading), pieces[0])
        embed = prefix + (self.text[first.start : end] if self.names_heading(path) else body)
        tokens = self.count(embed)
        truncated = tokens > self.max_tokens
        if truncated:
            embed = self._cut(embed)
            tokens = self.count(embed)
        self.chunks.append(
            Chunk(
                seq=len(self.chunks),
                text=body,
                embed_text=embed,
                heading_path=path,
                start=start,
                end=end,
                start_line=self.lines.line_of(start),
                end_line=self.lines.line_of(max(start, end - 1)),
                token_count=tokens,
                text_hash=hashlib.sha256(embed.encode("utf-8", "surrogatepass")).hexdigest(),
                truncated=truncated,
            )
        )

    def _cut(self, embed: str) -> str:
        """Longest embed[:k] within max_tokens (binary search on k)."""
        lo, hi = 0, len(embed)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count(embed[:mid]) <= self.max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return embed[:lo]
