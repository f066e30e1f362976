"""Typo tolerance: a query word no note holds is replaced by the closest word the index holds.

Only plain words are corrected (never "phrases", prefixes*, -exclusions or CJK), only when
no document holds them, and only by a word at most one edit away (two from twelve letters on;
a swap of neighbouring letters is one edit). Candidates come from the index's own vocabulary
(an fts5vocab table, porter stems, read one first letter at a time), compared with both the
word and its stem; the closest wins, then the more common. The cost is bounded: a range of
the vocabulary per word corrected, scored by rapidfuzz in C, and nothing at all for a query
whose words are all indexed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from engram.search.bm25 import idf
from engram.search.query import STOPWORDS, ParsedQuery
from engram.store import search as store_search
from engram.store.fts import quote

MIN_LENGTH = 4  # shorter words are too often another word one letter away
TWO_EDITS_FROM = 12  # letters from which two edits are allowed
# below this share of a query's words (weighted by rarity) held by some note, a word none
# holds is corrected; above, the rest carries the query (fusion.SEEN_TRUSTED: SciFact's claims
# name real chemicals and genes no abstract holds, and correcting them there cost nDCG)
SEEN_ENOUGH = 0.8
MAX_CANDIDATES = 20
MAX_TRIED = 5  # equally close candidates looked up in the index
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


@dataclass(frozen=True)
class Spelling:
    """A query with its misspelled words corrected, and each (as typed, as searched)."""

    query: ParsedQuery
    corrected: tuple[tuple[str, str], ...] = ()

    def notice(self) -> str | None:
        """ "showing results for …" when a word was corrected."""
        if not self.corrected:
            return None
        wrong = " and ".join(repr(w) for w, _ in self.corrected)
        return f"showing results for {self.query.text!r}: no note has {wrong}"


def correct(conn: Any, q: ParsedQuery) -> Spelling:
    """`q` with each plain word no indexed document holds replaced by its closest indexed
    word, when there is one close enough."""
    if not any(_correctable(t) for t in q.terms):
        return Spelling(q)
    total, counts = store_search.term_document_counts(conn, [quote(t) for t in q.terms])
    found = dict(zip(q.terms, counts, strict=True))
    missing = {t for t in q.terms if not found[t] and _correctable(t)}
    if not missing or _seen(total, list(found.values())) >= SEEN_ENOUGH:
        return Spelling(q)  # the words the notes hold carry the query: leave it as typed
    words = [t for t in q.terms if t in missing]
    others = [t for t in q.terms if t not in missing] + list(q.phrases)
    fixes = [(w, r) for w in words if (r := closest(conn, w, others))]
    if not fixes:
        return Spelling(q)
    fixed = dict(fixes)
    terms = tuple(dict.fromkeys(fixed.get(t, t) for t in q.terms))
    text = q.text
    for wrong, right in fixes:
        text = _replace_word(text, wrong, right)
    return Spelling(replace(q, terms=terms, text=text), tuple(fixes))


def closest(conn: Any, word: str, context: Sequence[str] = ()) -> str | None:
    """The word notes write that is closest to `word` (within the allowed edits), or None.
    Among equally close ones: the one found with more of the query's other words
    (`context`), then the likelier slip of a finger (a letter missed, doubled or swapped, a
    neighbouring key), then the more common."""
    from rapidfuzz.distance import OSA

    low = word.lower()
    edits = 2 if len(low) >= TWO_EDITS_FROM else 1
    vocab = dict(store_search.vocabulary(conn, _stem(low)[0]))
    options: list[tuple[int, str, str]] = []  # (edits from what was typed, stem, written)
    for term in _near_stems(low, vocab, edits):
        for written in store_search.written_forms(conn, term) - {low}:
            if (d := OSA.distance(low, written)) <= edits:
                options.append((d, term, written))
    if not options:
        return None
    best = min(d for d, _, _ in options)
    near = [(t, w) for d, t, w in options if d == best]
    together = _found_with(conn, list(dict.fromkeys(t for t, _ in near)), context)
    near.sort(key=lambda tw: (-together[tw[0]], slip(low, tw[1]), -vocab[tw[0]], tw[1]))
    return near[0][1]


def _near_stems(low: str, vocab: dict[str, int], edits: int) -> list[str]:
    """Indexed stems that may be a word `edits` from `low`: close to its stem, to itself, or
    to its beginning (`cllect` for `cllection`: the stem of `collection` is `collect`)."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    stem = _stem(low)
    terms = [t for t in vocab if len(t) >= 3 and t not in STOPWORDS and t not in (stem, low)]
    probes = {stem, low} | {low[:n] for n in range(max(3, len(stem) - edits - 1), len(low))}
    reach = edits + 1  # a stem may be a letter further than the word (closest checks words)
    found: dict[str, int] = {}
    for probe in probes:
        near = [t for t in terms if abs(len(t) - len(probe)) <= reach]
        for term, d, _ in process.extract(
            probe, near, scorer=OSA.distance, score_cutoff=reach, limit=MAX_CANDIDATES
        ):
            found[term] = min(found.get(term, reach), int(d))
    return sorted(found, key=lambda t: (found[t], -vocab[t], t))[: MAX_TRIED * 2]


def _found_with(conn: Any, terms: Sequence[str], context: Sequence[str]) -> dict[str, int]:
    """For each term, how many documents hold it with one of the query's other words."""
    if not context or len(terms) < 2:
        return dict.fromkeys(terms, 0)
    others = " OR ".join(quote(c) for c in context)
    return {
        t: store_search.count_matching(conn, f"{quote(t)} AND ({others})")
        for t in terms[:MAX_TRIED]
    } | {t: 0 for t in terms[MAX_TRIED:]}


def slip(typed: str, meant: str) -> float:
    """How unlikely a typing slip turns `meant` into `typed`: each letter missed, added or
    swapped with its neighbour costs 1, a key struck for a neighbouring one 1, another 1.5."""
    from rapidfuzz.distance import OSA, Levenshtein

    swapped = OSA.distance(meant, typed)
    if swapped < Levenshtein.distance(meant, typed):  # neighbours swapped: one slip each
        return float(swapped)
    cost = 0.0
    for op in Levenshtein.editops(meant, typed):
        if op.tag == "replace" and not _neighbours(meant[op.src_pos], typed[op.dest_pos]):
            cost += 1.5
        else:
            cost += 1.0
    return cost


def _neighbours(a: str, b: str) -> bool:
    """Keys next to each other on a QWERTY keyboard."""
    for r, row in enumerate(_ROWS):
        if a in row:
            c = row.index(a)
            near = {row[c - 1 : c], row[c + 1 : c + 2]}
            for other in (r - 1, r + 1):
                if 0 <= other < len(_ROWS):
                    near.add(_ROWS[other][c : c + 1])
                    near.add(_ROWS[other][c + 1 : c + 2] if other < r else _ROWS[other][c - 1 : c])
            return b in near - {""}
    return False


def _correctable(word: str) -> bool:
    """A plain word: letters only, four or more, no capital after the first (`dLNs`,
    `ComYMV`: names and symbols are written as meant)."""
    return (
        len(word) >= MIN_LENGTH
        and word.isascii()
        and word.isalpha()
        and word[1:] == word[1:].lower()
    )


def _seen(total: int, counts: Sequence[int]) -> float:
    """The share of a query's words (weighted by rarity) some note holds."""
    weights = [idf(total, n) for n in counts]
    return sum(w for w, n in zip(weights, counts, strict=True) if n) / (sum(weights) or 1.0)


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer  # on first use: the package loads all its ~30 languages

    return snowballstemmer.stemmer("porter")  # the stemmer of FTS5's porter tokenizer


def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def _replace_word(text: str, wrong: str, right: str) -> str:
    return re.sub(rf"(?i)(?<!\w){re.escape(wrong)}(?!\w)", right, text)
