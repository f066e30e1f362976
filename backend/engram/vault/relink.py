"""Which links a move breaks, and the new text of each note that holds one. Pure: no I/O.

The index says which links point where (`StoredLink`s, as resolved before the move). After a
move a link must still reach the file it reached before (the moved file at its new path, or
the same other file). Only links that would not are rewritten: those to the moved file
(unless their spelling still finds it, e.g. `[[Name]]` after a move to another folder), the
moved note's own relative links, and links elsewhere that the moved file's new name would
otherwise capture (a `[[Name]]` that Obsidian would now resolve to the newcomer).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from engram.errors import ConflictError

from .parse import Link
from .resolve import LinkIndex, resolve
from .rewrite import apply, new_target, style_of
from .spans import LinkSpan, link_spans


@dataclass(frozen=True)
class StoredLink:
    """A link as the index holds it: the fields the parser gave, and where it resolved."""

    kind: str
    target: str
    heading: str | None
    block: str | None
    display: str | None
    embed: bool
    line: int
    resolved: str | None


def relink(
    text: str,
    source: str,
    links: Iterable[StoredLink],
    old: str,
    new: str,
    after: LinkIndex,
) -> tuple[str, int]:
    """(new text, links rewritten) of the note at `source` when `old` moves to `new`.

    `after` holds the vault's files after the move. A link the index knows but the text does
    not hold where expected raises ConflictError: the index is behind the file.
    """
    new_source = new if source == old else source
    spans = link_spans(text)
    places = _places(spans)
    edits: list[tuple[LinkSpan, str]] = []
    # a note may write one link thousands of times: each spelling is resolved and rewritten once
    still: dict[tuple[str, bool], str | None] = {}
    rewritten: dict[tuple[object, ...], str] = {}
    for lk in links:
        if lk.resolved is None:
            continue
        wanted = new if lk.resolved == old else lk.resolved
        markdown = lk.kind == "markdown"
        if (lk.target, markdown) not in still:
            still[lk.target, markdown] = resolve(
                lk.target, new_source, after, markdown=markdown
            ).path
        if still[lk.target, markdown] == wanted:
            continue
        queue = places.get(_key(lk))
        if not queue:
            raise ConflictError(
                f"{source} line {lk.line}: a link the index knows is not in the file as "
                "expected; nothing was changed",
                "run engram update, then retry",
            )
        span = spans[queue.popleft()]
        spelling = (lk.kind, lk.target, span.raw, span.angle, lk.resolved)
        if spelling not in rewritten:
            style = style_of(span, source, lk.resolved)
            rewritten[spelling] = new_target(span, style, new_source, wanted, after)
        edits.append((span, rewritten[spelling]))
    return apply(text, edits), len(edits)


def _places(spans: list[LinkSpan]) -> dict[tuple[object, ...], deque[int]]:
    """Each link's spans in text order, so a stored link takes the first unused span of the
    same link on the same line (any frontmatter line: the index keeps the first line a
    frontmatter link's text appears on) in one look-up, however many links the note has."""
    out: dict[tuple[object, ...], deque[int]] = {}
    for i, span in enumerate(spans):
        out.setdefault(_key(span.link), deque()).append(i)
    return out


def _key(link: StoredLink | Link) -> tuple[object, ...]:
    where = None if link.kind == "frontmatter" else link.line
    return (link.kind, link.target, link.heading, link.block, link.display, link.embed, where)
