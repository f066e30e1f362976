"""The query language shared by search, vsearch and query.

Words are OR-ed and ranked (a pasted paragraph still finds things), `"phrases"` are required,
`-word` / `-"phrase"` exclude, `word*` is a prefix, and `key:value` filters: `path:`, `tag:`,
`collection:`, `kind:` (note, memory or all), `after:`, `before:`, and any frontmatter or inline
field (`type:decision`). A filter with a `-` before it leaves out what it names (`-path:Engram/`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from engram.store.filters import KINDS, Filters
from engram.store.fts import CJK_RUN

_TOKEN = re.compile(r'(-?)([A-Za-z_][\w.-]*:)?"([^"]*)"?|(\S+)')
_FILTER = re.compile(r"^([A-Za-z_][\w.-]*):(.+)$")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
FILTER_KEYS = {"path", "tag", "collection", "col", "kind", "after", "before"}
KIND_WORDS = {"note": ("note",), "notes": ("note",), "memory": ("memory",), "all": KINDS}

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren't",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "can't",
        "cannot",
        "could",
        "couldn't",
        "did",
        "didn't",
        "do",
        "does",
        "doesn't",
        "doing",
        "don't",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "hadn't",
        "has",
        "hasn't",
        "have",
        "haven't",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn't",
        "it",
        "it's",
        "its",
        "itself",
        "let's",
        "me",
        "more",
        "most",
        "mustn't",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "shan't",
        "she",
        "should",
        "shouldn't",
        "so",
        "some",
        "such",
        "than",
        "that",
        "that's",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "there's",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "wasn't",
        "we",
        "were",
        "weren't",
        "what",
        "what's",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "with",
        "won't",
        "would",
        "wouldn't",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)


class QueryError(ValueError):
    """The query cannot be understood; the message says how to write it."""


@dataclass(frozen=True)
class ParsedQuery:
    """A user query split into ranked terms, required phrases, exclusions and filters."""

    terms: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    cjk: tuple[str, ...] = ()
    filters: Filters = field(default_factory=Filters)
    text: str = ""  # the words without operators or filters: what a model embeds
    # how often each ranked word (lowercased) was written, when more than once: a word a
    # pasted paragraph keeps coming back to is what it is about
    counts: Mapping[str, int] = field(default_factory=dict)

    def count(self, term: str) -> int:
        """How many times the query holds `term` (1 unless repeated)."""
        return self.counts.get(term.lower(), 1)

    @property
    def has_terms(self) -> bool:
        """True when there is something to rank by."""
        return bool(self.terms or self.prefixes or self.phrases or self.cjk)

    def with_filters(self, extra: Filters) -> ParsedQuery:
        """This query with more filters (from flags) merged in."""
        f = self.filters
        merged = Filters(
            collections=f.collections + extra.collections,
            path_prefixes=f.path_prefixes + extra.path_prefixes,
            tags=f.tags + extra.tags,
            fields=f.fields + extra.fields,
            after=max(filter(None, (f.after, extra.after)), default=None),
            before=min(filter(None, (f.before, extra.before)), default=None),
            doc_ids=extra.doc_ids if extra.doc_ids is not None else f.doc_ids,
            kinds=tuple(dict.fromkeys(f.kinds + extra.kinds)),
            not_collections=f.not_collections + extra.not_collections,
            not_path_prefixes=f.not_path_prefixes + extra.not_path_prefixes,
            not_tags=f.not_tags + extra.not_tags,
            not_fields=f.not_fields + extra.not_fields,
            memory_paths=f.memory_paths + extra.memory_paths,
        )
        return replace(self, filters=merged)


@dataclass
class _Collected:
    """What the tokens of a query said so far (parse_query fills it, token by token)."""

    terms: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    cjk: list[str] = field(default_factory=list)
    free: list[str] = field(default_factory=list)
    collections: list[str] = field(default_factory=list)
    path_prefixes: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    fields: list[tuple[str, str]] = field(default_factory=list)
    after: str | None = None
    before: str | None = None
    kinds: list[str] = field(default_factory=list)
    not_kinds: list[str] = field(default_factory=list)
    not_collections: list[str] = field(default_factory=list)
    not_path_prefixes: list[str] = field(default_factory=list)
    not_tags: list[str] = field(default_factory=list)
    not_fields: list[tuple[str, str]] = field(default_factory=list)


def parse_query(raw: str) -> ParsedQuery:
    """Parse user input; never produces FTS syntax errors, raises QueryError on bad filters."""
    c = _Collected()
    raw = _CONTROL.sub(" ", raw)  # a NUL would cut the FTS5 string short
    for m in _TOKEN.finditer(raw):
        neg, fkey, quoted, bare = m.group(1), m.group(2), m.group(3), m.group(4)
        if quoted is not None and fkey:
            (_leave_out if neg else _add_filter)(c, fkey[:-1], quoted)
        elif quoted is not None:
            if _has_word(quoted):
                (c.excluded if neg else c.phrases).append(quoted.strip())
                if not neg:
                    c.free.append(quoted.strip())
        else:
            fm = _FILTER.match(bare)
            # "judgement:”" in pasted prose is a word before a quote mark, not a filter
            if fm and _has_word(fm.group(2)) and not fm.group(2).startswith("//"):
                _add_filter(c, fm.group(1), fm.group(2))
            elif (nm := _FILTER.match(bare[1:])) and bare.startswith("-") and _has_word(nm[2]):
                _leave_out(c, nm.group(1), nm.group(2))  # -path:Engram/, -tag:draft
            else:
                _add_word(bare, c.terms, c.prefixes, c.excluded, c.cjk, c.free)
    return _parsed(c)


def _add_filter(c: _Collected, key: str, value: str) -> None:
    k = key.lower()
    if k in ("collection", "col"):
        c.collections.append(value)
    elif k == "path":
        c.path_prefixes.append(value)
    elif k == "tag":
        c.tags.append(value.lstrip("#"))
    elif k == "kind":
        c.kinds.extend(_kind(value))
    elif k == "after":
        c.after = parse_date(value, "after")
    elif k == "before":
        c.before = parse_date(value, "before")
    else:
        c.fields.append((key, value))


def _leave_out(c: _Collected, key: str, value: str) -> None:
    """A filter with `-` before it: what it names is left out."""
    k = key.lower()
    if k in ("collection", "col"):
        c.not_collections.append(value)
    elif k == "path":
        c.not_path_prefixes.append(value)
    elif k == "tag":
        c.not_tags.append(value.lstrip("#"))
    elif k == "kind":
        c.not_kinds.extend(_kind(value))
    elif k in ("after", "before"):
        other = "before" if k == "after" else "after"
        raise QueryError(f"-{k}: is not a filter; write {other}:{value} instead")
    else:
        c.not_fields.append((key, value))


def _kind(value: str) -> tuple[str, ...]:
    kinds = KIND_WORDS.get(value.strip().lower())
    if kinds is None:
        raise QueryError(f"kind: expects note, memory or all, got {value!r}")
    return kinds


def _kinds(c: _Collected) -> tuple[str, ...]:
    """The kinds asked for: named ones, or every kind but the left-out ones."""
    if not c.not_kinds:
        return tuple(dict.fromkeys(c.kinds))
    chosen = [k for k in (c.kinds or KINDS) if k not in c.not_kinds]
    if not chosen:
        raise QueryError("the kind: filters leave nothing: use kind:note, kind:memory or kind:all")
    return tuple(chosen)


def _parsed(c: _Collected) -> ParsedQuery:
    terms = c.terms
    content_terms = [t for t in terms if t.lower() not in STOPWORDS]
    if content_terms or c.prefixes or c.phrases or c.cjk:
        terms = content_terms
    repeats = Counter(t.lower() for t in terms)
    return ParsedQuery(
        terms=tuple(_dedupe(terms)),
        prefixes=tuple(_dedupe(c.prefixes)),
        phrases=tuple(_dedupe(c.phrases)),
        excluded=tuple(_dedupe(c.excluded)),
        cjk=tuple(_dedupe(c.cjk)),
        filters=Filters(
            collections=tuple(c.collections),
            path_prefixes=tuple(c.path_prefixes),
            tags=tuple(c.tags),
            fields=tuple(c.fields),
            after=c.after,
            before=c.before,
            kinds=_kinds(c),
            not_collections=tuple(c.not_collections),
            not_path_prefixes=tuple(c.not_path_prefixes),
            not_tags=tuple(c.not_tags),
            not_fields=tuple(c.not_fields),
        ),
        text=" ".join(c.free),
        counts={t: n for t, n in repeats.items() if n > 1},
    )


def _add_word(
    word: str,
    terms: list[str],
    prefixes: list[str],
    excluded: list[str],
    cjk: list[str],
    free: list[str],
) -> None:
    if word.startswith("-") and len(word) > 1 and _has_word(word[1:]):
        excluded.append(word[1:].strip("*"))
        return
    free.append(word)
    runs = CJK_RUN.findall(word)
    cjk.extend(runs)
    rest = CJK_RUN.sub(" ", word)
    for piece in rest.split():
        is_prefix = piece.endswith("*")
        core = _strip_punct(piece)
        if not _has_word(core):
            continue
        (prefixes if is_prefix else terms).append(core)


def _strip_punct(word: str) -> str:
    start, end = 0, len(word)
    while start < end and not word[start].isalnum():
        start += 1
    while end > start and not word[end - 1].isalnum():
        end -= 1
    return word[start:end]


def _has_word(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.lower() not in seen:
            seen.add(item.lower())
            out.append(item)
    return out


def parse_date(value: str, what: str) -> str:
    """An ISO date for `after:`/`before:` from YYYY, YYYY-MM, YYYY-MM-DD or today/yesterday."""
    v = value.strip().lower()
    today = dt.datetime.now(dt.UTC).date()
    if v == "today":
        return today.isoformat()
    if v == "yesterday":
        return (today - dt.timedelta(days=1)).isoformat()
    for fmt, pad in (("%Y-%m-%d", ""), ("%Y-%m", "-01"), ("%Y", "-01-01")):
        try:
            dt.datetime.strptime(v, fmt)
        except ValueError:
            continue
        return v + pad
    try:
        return dt.datetime.fromisoformat(v).isoformat()
    except ValueError:
        raise QueryError(
            f"{what}: expects a date like 2024-05-01, 2024-05 or 2024, got {value!r}"
        ) from None
