"""Obsidian link resolution: which vault file a `[[link]]` or `[text](path)` points at.

Pure functions over an in-memory `LinkIndex` of every file in the vault (notes and
attachments). The rules, the order they apply in, and the evidence for each are in
docs/links.md; keep the two in step.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # parsing libraries load only when indexing
    from .parse import ParsedNote

# Obsidian's stripHeading: ASCII punctuation becomes a space (hyphen, underscore and
# apostrophe survive), runs of spaces shrink to one; we also ignore case.
_HEADING_PUNCT = re.compile(r"[!\"#$%&()*+,./:;<=>?@\[\\\]^`{|}~]")
_SPACES = re.compile(r"\s+")
_NOTE_EXT = ".md"


def _nfc(text: str) -> str:
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


@lru_cache(maxsize=65536)
def normalize_heading(text: str) -> str:
    """Heading text as Obsidian compares it: punctuation to spaces, spaces squeezed, lower case."""
    return _SPACES.sub(" ", _HEADING_PUNCT.sub(" ", _nfc(text))).strip().lower()


@lru_cache(maxsize=65536)  # a vault links the same names over and over
def link_key(target: str) -> str:
    """Lookup key of a link target or a file path: its last part, lower case, without `.md`.

    A link can only resolve to a file with the same key, so links stored with their key are
    the ones to re-resolve when a file with that key appears, disappears or moves.
    """
    last = _nfc(target.strip()).rsplit("/", 1)[-1].lower()
    return _strip_ext(last)


def _strip_ext(name: str) -> str:
    """`name` without every trailing `.md`: `[[0.MD]]` may mean `0.md` or `0.MD.md`, so both
    files share the key of the link (the exact variants then decide)."""
    while name.endswith(_NOTE_EXT):
        name = name[: -len(_NOTE_EXT)]
    return name


@dataclass(frozen=True)
class NoteInfo:
    """What resolution needs from a note: aliases, headings (level, text as written), block ids."""

    aliases: tuple[str, ...] = ()
    headings: tuple[tuple[int, str], ...] = ()
    blocks: tuple[str, ...] = ()
    title: str | None = None

    @classmethod
    def from_parsed(cls, note: ParsedNote) -> NoteInfo:
        """The parts of a parsed note that link resolution uses."""
        return cls(
            aliases=note.aliases,
            headings=tuple((h.level, h.text) for h in note.headings),
            blocks=tuple(b for b, _ in note.blocks),
            title=note.title,
        )


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a link points: the file (or None), the rule that chose it, subpath checks."""

    path: str | None
    rule: str  # self | relative | exact | unique | same-folder | shortest | alias | unresolved
    heading_found: bool | None = None  # None: no heading asked, or the target is not a note
    block_found: bool | None = None
    alternatives: int = 0  # other files that matched as well (ambiguous name)


_UNRESOLVED = Resolution(None, "unresolved")


@dataclass(frozen=True)
class Candidate:
    """A file offered for human input: what matched, how, and a 0..1 score."""

    path: str
    label: str
    via: str  # link | name | alias | title | path | fuzzy
    score: float


class LinkIndex:
    """Every vault file by lookup key, lower-case path and alias; notes' headings and blocks."""

    def __init__(self) -> None:
        self._lower: dict[str, str] = {}  # path -> NFC lower-case path
        self._by_key: dict[str, list[str]] = {}
        self._by_lower: dict[str, list[str]] = {}
        self._notes: dict[str, NoteInfo] = {}
        self._by_alias: dict[str, list[str]] = {}
        self._headings: dict[str, tuple[tuple[int, str], ...]] = {}  # normalized, filled lazily
        self._labels: list[tuple[str, str, str, str]] | None = None  # for candidates()

    @classmethod
    def build(cls, files: Iterable[str], notes: Iterable[tuple[str, NoteInfo]] = ()) -> LinkIndex:
        """An index of `files` (vault-relative POSIX paths) with metadata for the notes given."""
        index = cls()
        info = dict(notes)
        for path in files:
            index.add(path, info.get(path))
        for path, note in info.items():
            if path not in index._lower:
                index.add(path, note)
        return index

    def __contains__(self, path: object) -> bool:
        return path in self._lower

    def __len__(self) -> int:
        return len(self._lower)

    def note(self, path: str) -> NoteInfo | None:
        """The note's metadata, None for attachments and unknown paths."""
        return self._notes.get(path)

    def paths_for_key(self, key: str) -> tuple[str, ...]:
        """Files whose lookup key is `key` (see `link_key`)."""
        return tuple(self._by_key.get(key, ()))

    def add(self, path: str, note: NoteInfo | None = None) -> frozenset[str]:
        """Add or update a file; returns the link keys whose links may now resolve differently."""
        old = self.remove(path) if path in self._lower else frozenset()
        lower = _nfc(path).lower()
        key = link_key(path)
        self._lower[path] = lower
        self._by_key.setdefault(key, []).append(path)
        self._by_lower.setdefault(lower, []).append(path)
        keys = {key}
        if note is None and lower.endswith(_NOTE_EXT):
            note = NoteInfo()
        if note is not None:
            self._notes[path] = note
            for alias in note.aliases:
                alias_key = _nfc(alias).strip().lower()
                self._by_alias.setdefault(alias_key, []).append(path)
                keys.add(alias_key)
        self._labels = None
        return frozenset(keys) | old

    def remove(self, path: str) -> frozenset[str]:
        """Forget a file; returns the link keys whose links may now resolve differently."""
        lower = self._lower.pop(path, None)
        if lower is None:
            return frozenset()
        key = link_key(path)
        _drop(self._by_key, key, path)
        _drop(self._by_lower, lower, path)
        keys = {key}
        note = self._notes.pop(path, None)
        self._headings.pop(path, None)
        for alias in note.aliases if note else ():
            alias_key = _nfc(alias).strip().lower()
            _drop(self._by_alias, alias_key, path)
            keys.add(alias_key)
        self._labels = None
        return frozenset(keys)

    def rename(self, old: str, new: str) -> frozenset[str]:
        """Move a file, keeping its metadata; returns the affected link keys of both names."""
        note = self._notes.get(old)
        return self.remove(old) | self.add(new, note)

    def has_heading(self, path: str, heading: str) -> bool:
        """Does the note have this heading (or `A#B` chain: B after A), Obsidian-normalized?"""
        headings = self._headings.get(path)
        if headings is None:
            note = self._notes.get(path)
            headings = (
                tuple((lvl, normalize_heading(t)) for lvl, t in note.headings) if note else ()
            )
            self._headings[path] = headings
        parts = [p for p in (normalize_heading(x) for x in heading.split("#")) if p]
        if not parts:
            return False
        pos = 0
        for part in parts:
            pos = next((i + 1 for i in range(pos, len(headings)) if headings[i][1] == part), -1)
            if pos < 0:
                return False
        return True

    def has_block(self, path: str, block: str) -> bool:
        """Does the note carry the `^block` id (case-insensitive)?"""
        note = self._notes.get(path)
        wanted = block.strip().lstrip("^").lower()
        return note is not None and any(b.lower() == wanted for b in note.blocks)

    def _exact(self, lowered: str, original: str) -> str | None:
        paths = self._by_lower.get(lowered)
        if not paths:
            return None
        return original if original in paths else min(paths)


def _drop(table: dict[str, list[str]], key: str, path: str) -> None:
    paths = table.get(key)
    if paths and path in paths:
        paths.remove(path)
        if not paths:
            del table[key]


def resolve(
    target: str,
    source_path: str,
    index: LinkIndex,
    *,
    heading: str | None = None,
    block: str | None = None,
    markdown: bool = False,
    aliases: bool = False,
) -> Resolution:
    """Resolve a link target written in `source_path` the way Obsidian does (docs/links.md).

    `markdown=True` for `[text](path)` links (tried relative to the source first);
    `aliases=True` adds Engram's alias fallback, which Obsidian itself does not do.
    """
    path, rule, alternatives = _resolve_path(target, source_path, index, markdown, aliases)
    if path is None:
        return _UNRESOLVED
    if path not in index._notes or not (heading or block):
        return Resolution(path, rule, None, None, alternatives)
    if heading and (heading.startswith("^") or "#^" in heading):  # `[[N#Sec#^id]]`: block decides
        block, heading = heading.rpartition("^")[2], None
    heading_found = index.has_heading(path, heading) if heading else None
    block_found = index.has_block(path, block) if block else None
    return Resolution(path, rule, heading_found, block_found, alternatives)


def _resolve_path(
    target: str, source: str, index: LinkIndex, markdown: bool, aliases: bool
) -> tuple[str | None, str, int]:
    text = _nfc(target.strip())
    if not text:
        return (source if source in index else None), "self", 0
    explicit_relative = text.startswith(("./", "../"))
    if explicit_relative or (markdown and not text.startswith("/")):
        hit = _relative(text, source, index)
        if hit or explicit_relative:
            return hit, "relative", 0
    text = text.lstrip("/")
    lowered = text.lower()
    key = _strip_ext(lowered.rpartition("/")[2])
    if lowered.endswith(_NOTE_EXT):  # the file as written first, then a name ending in `.md`
        variants = (lowered, lowered + _NOTE_EXT)
    else:
        variants = (lowered + _NOTE_EXT, lowered)
    lower = index._lower
    paths = index._by_key.get(key, ())
    for variant in variants:
        suffix = "/" + variant
        if len(paths) == 1:  # the usual case: one file of that name
            lp = lower[paths[0]]
            if lp == variant or lp.endswith(suffix):
                return paths[0], ("exact" if lp == variant else "unique"), 0
            continue
        found = [p for p in paths if lower[p] == variant or lower[p].endswith(suffix)]
        if not found:
            continue
        if len(found) == 1:
            return found[0], ("exact" if lower[found[0]] == variant else "unique"), 0
        folder = _nfc(source).lower().rpartition("/")[0]
        original = text if variant == lowered else text + _NOTE_EXT

        def rank(
            p: str, variant: str = variant, original: str = original, folder: str = folder
        ) -> tuple[bool, bool, bool, int, str]:
            lp = lower[p]
            return (lp != variant, p != original, lp.rpartition("/")[0] != folder, len(p), p)

        best = min(found, key=rank)
        first = rank(best)
        rule = "exact" if not first[0] else "same-folder" if not first[2] else "shortest"
        return best, rule, len(found) - 1
    if aliases and "/" not in text:
        holders = index._by_alias.get(lowered, ())
        if holders:
            folder = _nfc(source).lower().rpartition("/")[0]
            best = min(holders, key=lambda p: (lower[p].rpartition("/")[0] != folder, len(p), p))
            return best, "alias", len(holders) - 1
    return None, "unresolved", 0


def _relative(text: str, source: str, index: LinkIndex) -> str | None:
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(_nfc(source)), text))
    if joined == ".." or joined.startswith("../") or joined == ".":
        return None  # outside the vault, or the folder itself
    lowered = joined.lower()
    if lowered.endswith(_NOTE_EXT):
        return index._exact(lowered, joined)
    return index._exact(lowered + _NOTE_EXT, joined + _NOTE_EXT) or index._exact(lowered, joined)


def candidates(query: str, index: LinkIndex, limit: int = 10) -> list[Candidate]:
    """Files a person may mean by `query` (path, name, alias or title), best first.

    An exact link resolution scores 1.0; exact names, aliases and titles next; then prefix
    and substring matches; then rapidfuzz "did you mean" suggestions for typos.
    """
    text = _nfc(query.strip())
    if not text or limit <= 0:
        return []
    best: dict[str, Candidate] = {}

    def offer(path: str, label: str, via: str, score: float) -> None:
        if path not in best or best[path].score < score:
            best[path] = Candidate(path, label, via, round(score, 4))

    hit = resolve(text, "", index, aliases=True)
    if hit.path is not None:
        offer(hit.path, text, "alias" if hit.rule == "alias" else "link", 1.0)
    lowered = text.lower()
    labels = _labels(index)
    weight = {"name": 1.0, "alias": 0.98, "title": 0.96, "path": 0.94}
    for low, label, path, via in labels:
        if low == lowered:
            offer(path, label, via, 0.99 * weight[via])
        elif low.startswith(lowered):
            offer(path, label, via, (0.7 + 0.2 * len(lowered) / len(low)) * weight[via])
        elif lowered in low:
            offer(path, label, via, (0.55 + 0.2 * len(lowered) / len(low)) * weight[via])
    if len(best) < limit:  # "did you mean": edit-distance similarity over names and aliases
        from rapidfuzz import fuzz, process  # loaded only for suggestions

        names = [row for row in labels if row[3] != "path"]
        choices = [row[0] for row in names]
        for _, ratio, i in process.extract(
            lowered, choices, scorer=fuzz.ratio, limit=limit, score_cutoff=60
        ):
            offer(names[i][2], names[i][1], "fuzzy", 0.5 * ratio / 100)
    ranked = sorted(best.values(), key=lambda c: (-c.score, len(c.path), c.path))
    return ranked[:limit]


def _labels(index: LinkIndex) -> list[tuple[str, str, str, str]]:
    """(lower label, label, path, via) for every name, alias, title and path; cached."""
    if index._labels is None:
        rows: list[tuple[str, str, str, str]] = []
        for path, lower in index._lower.items():
            name = posixpath.basename(path)
            stem = name[: -len(_NOTE_EXT)] if lower.endswith(_NOTE_EXT) else name
            rows.append((_nfc(stem).lower(), stem, path, "name"))
            if "/" in path:
                rows.append((lower, path, path, "path"))
            note = index._notes.get(path)
            if note is None:
                continue
            rows.extend((_nfc(a).strip().lower(), a, path, "alias") for a in note.aliases)
            if note.title and note.title != stem:
                rows.append((_nfc(note.title).lower(), note.title, path, "title"))
        index._labels = rows
    return index._labels
