"""Finding a note from what a person types: a path, a file name, a title or an alias.

Exact answers win (a path, or a name that resolves as a link would); an alias or a title
that belongs to exactly one note is taken as well, and so is a part of a name, title, alias
or path that only one note has. Anything else is an error listing the notes meant most
likely: all of them when several match, else the closest spellings ("did you mean", by
rapidfuzz through `vault.resolve.candidates`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from engram.errors import NotFoundError
from engram.graph.results import NoteRef
from engram.vault.resolve import LinkIndex, NoteInfo, candidates, resolve

EXACT = 0.95  # candidates() scores exact names, aliases and titles at or above this
SUGGESTIONS = 5


class NoteFinder:
    """The notes of one collection, looked up by path, name, title or alias."""

    def __init__(self, rows: Iterable[tuple[int, str, str, list[str]]]) -> None:
        self.refs: dict[str, NoteRef] = {}
        self._folded: dict[str, set[str]] = {}  # accent-free path, name, title, alias -> paths
        infos = []
        for doc_id, path, title, aliases in rows:
            self.refs[path] = NoteRef(path, title, doc_id)
            infos.append((path, NoteInfo(aliases=tuple(aliases), title=title)))
            stem = path.removesuffix(".md")
            for label in (stem, stem.rpartition("/")[2], title, *aliases):
                self._folded.setdefault(fold(label), set()).add(path)
        self.index = LinkIndex.build(self.refs, infos)
        self._lower = {p.lower(): p for p in self.refs}

    def find(self, query: str) -> NoteRef:
        """The note `query` names, or NotFoundError with suggestions (ambiguous or unknown)."""
        text = query.strip().strip("/")
        if not text:
            raise NotFoundError("no note given")
        for spelling in (text, text + ".md"):
            exact = self._lower.get(spelling.lower())
            if exact is not None:
                return self.refs[exact]
        hit = resolve(text, "", self.index, aliases=True)
        if hit.path is not None and hit.path in self.refs:
            if hit.alternatives == 0 or hit.rule == "exact":
                return self.refs[hit.path]
            return self._ambiguous(text)
        plain = self._folded.get(fold(text.removesuffix(".md")), set())
        if len(plain) == 1:  # `cafe notes` for `Café Notes.md`
            return self.refs[next(iter(plain))]
        found = candidates(text, self.index, limit=SUGGESTIONS * 2)
        sure = {c.path for c in found if c.score >= EXACT}
        if len(sure) > 1:
            return self._ambiguous(text)
        partial = {c.path for c in found if c.via != "fuzzy"}  # prefix or substring
        if len(sure) == 1 or len(partial) == 1:
            return self.refs[(sure or partial).pop()]
        listed = [c.path for c in found][:SUGGESTIONS]
        if len(partial) > 1:
            raise NotFoundError(f"several notes match {text!r}; give more of the path", listed)
        raise NotFoundError(f"no note matches {text!r}", listed)

    def alias_holder(self, target: str) -> str | None:
        """The note that has `target` as an alias (when exactly one does)."""
        hit = resolve(target, "", self.index, aliases=True)
        return hit.path if hit.rule == "alias" and hit.alternatives == 0 else None

    def _ambiguous(self, text: str) -> NoteRef:
        found = candidates(text, self.index, limit=SUGGESTIONS * 2)
        exact = [c.path for c in found if c.score >= EXACT]  # the equally good ones only
        listed = (exact if len(exact) > 1 else [c.path for c in found])[:SUGGESTIONS]
        raise NotFoundError(f"several notes match {text!r}; give a path", listed)


def fold(text: str) -> str:
    """Lower case without accents (NFKD, combining marks dropped), for forgiving lookups."""
    decomposed = unicodedata.normalize("NFKD", text.strip())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
