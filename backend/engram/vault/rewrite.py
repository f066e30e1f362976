"""Rewriting a link's target so it points at a moved file, in the style it was written in.

The style rule (docs/notes.md): a relative link (`./x`, `../x`, or a markdown link that
resolved relative to its note) stays relative; a path link (`[[Folder/Note]]`, `/Folder/Note`)
stays a full path from the vault root (a leading `/` is kept); a bare name (`[[Note]]`) stays
a bare name when no other file in the vault has the new name, and becomes the full path when
one does. The `.md` extension is written when the link had it; heading, block and display
text are never touched; a markdown link keeps `<...>` or its URL-encoding (spaces as `%20`,
and full percent-encoding when it encoded non-ASCII letters). Every candidate is checked with
the resolver; a link that cannot be made to resolve to its file is an error, never a guess.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from urllib.parse import quote

from engram.errors import EngramError

from .resolve import LinkIndex, link_key, resolve
from .spans import LinkSpan

_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_NON_ASCII_PCT = re.compile(r"%[89A-Fa-f][0-9A-Fa-f]")
_MINIMAL = re.compile(r"[\s()<>%\[\]]")
_NOTE_EXT = ".md"


class UnrewritableLink(EngramError):
    """No spelling of the link resolves to the moved file (should not happen; never guessed)."""

    code = "conflict"


def style_of(span: LinkSpan, old_source: str, old_target: str) -> str:
    """`relative`, `path` or `name`: how the link named its file before the move."""
    target = span.link.target
    if target.startswith(("./", "../")):
        return "relative"
    if span.link.kind == "markdown" and not target.startswith("/"):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(old_source), target))
        if _same(joined, old_target) or _same(joined + _NOTE_EXT, old_target):
            return "relative"
    return "path" if "/" in target else "name"


def _same(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def new_target(
    span: LinkSpan,
    style: str,
    new_source: str,
    new_path: str,
    index: LinkIndex,
) -> str:
    """The target text (as written, encoded for markdown) that makes the link, now written in
    `new_source`, resolve to `new_path` in `index` (the vault after the move)."""
    link = span.link
    markdown = link.kind == "markdown"
    keep_ext = link.target.lower().endswith(_NOTE_EXT) or not new_path.lower().endswith(_NOTE_EXT)
    shown = new_path if keep_ext else new_path[: -len(_NOTE_EXT)]
    full = ("/" if link.target.startswith("/") else "") + shown
    relative = posixpath.relpath(shown, posixpath.dirname(new_source) or ".")
    if link.target.startswith("./") and not relative.startswith("../"):
        relative = "./" + relative
    elif not markdown and not relative.startswith("../"):
        relative = "./" + relative  # a bare wikilink path would not be read as relative
    name = posixpath.basename(shown)
    unique = len(index.paths_for_key(link_key(new_path))) == 1
    preferred = {
        "relative": [relative, full, "/" + shown],
        "path": [full, "/" + shown, relative],
        "name": ([name] if unique else []) + [shown, "/" + shown, relative],
    }[style]
    for candidate in dict.fromkeys(preferred):
        hit = resolve(candidate, new_source, index, markdown=markdown)
        if hit.path == new_path:
            return encode_like(span, candidate) if markdown else candidate
    raise UnrewritableLink(
        f"no link from {new_source} to {new_path} resolves in this vault; nothing was changed"
    )


def encode_like(span: LinkSpan, target: str) -> str:
    """A markdown destination encoded the way the original was (`<...>` needs none)."""
    if span.angle:
        return target
    if _NON_ASCII_PCT.search(span.raw):
        return quote(target, safe="/!$&'*+,;=:@~-._")
    return _MINIMAL.sub(lambda m: quote(m.group(0)), target)


def apply(text: str, edits: Iterable[tuple[LinkSpan, str]]) -> str:
    """`text` with each span's target replaced (spans must not overlap)."""
    out: list[str] = []
    done = 0  # text[:done] is in `out`: one pass, however many links a note holds
    for span, target in sorted(edits, key=lambda e: e[0].start):
        out += (text[done : span.start], target)
        done = span.end
    out.append(text[done:])
    return "".join(out)


def link_to(path: str, source: str, index: LinkIndex) -> str:
    """A wikilink target from `source` to `path`: the bare name when no other file has it,
    else the full path (`.md` left out for notes), checked with the resolver."""
    shown = path[: -len(_NOTE_EXT)] if path.lower().endswith(_NOTE_EXT) else path
    name = posixpath.basename(shown)
    unique = len(index.paths_for_key(link_key(path))) == 1
    for candidate in ([name] if unique else []) + [shown, "/" + shown]:
        if resolve(candidate, source, index).path == path:
            return candidate
    raise UnrewritableLink(f"no link from {source} to {path} resolves in this vault")
