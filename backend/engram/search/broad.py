"""Bounds on prefixes and phrases that most notes hold.

Ranking a prefix or a phrase walks the position list of every word it covers in every note
holding it: on the 100,000-note benchmark vault `b*` (1,141 words, 46 million positions) took
0.6 s to rank, and `"babi babi"` 0.3 s, a third of that FTS5 matching the phrase over the
whole index once more for its IDF, whatever rows it then scores. Counting the notes holding a
prefix is cheap (its list, 5-20 ms); a phrase is counted by its words first (the notes holding
them all, no positions read), and matched only as far back as it needs.

A prefix or phrase in more than BROAD_SHARE of the notes and more than BROAD_MIN of them is
*broad*. Beside something narrower it ranks nothing, as common words (its IDF is near zero,
bm25.prune_common_terms), and a broad phrase stays required. Alone, it is ranked within the
RANK_CAP newest notes (ids grow as notes are first indexed), a broad phrase by its words in
the notes there that hold it. Each bound says so in a notice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from engram.search.query import ParsedQuery
from engram.store.fts import quote

BROAD_SHARE = 1 / 4
BROAD_MIN = 10_000  # notes: a smaller vault ranks every prefix and phrase in full
# the 5,000 newest notes holding `b*` rank in 36-72 ms, 10,000 in 66-103, 20,000 in 120-230
# (2 busy cores); a search for `b*` within 5,000 notes took 75-194 ms in all, 10,000 98-335
RANK_CAP = 5_000
_WORD = re.compile(r"\w+")


def phrase_words(phrase: str) -> list[str]:
    """The words of a phrase as the full-text tokenizer splits them, each once."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(phrase)))


def word_count_expr(phrase: str) -> str | None:
    """An FTS5 expression for the notes holding all of a phrase's words (a superset of the
    phrase's, found without reading positions), None for a phrase of one word."""
    if len(_WORD.findall(phrase)) < 2:
        return None
    return " AND ".join(quote(w) for w in phrase_words(phrase))


def is_broad(total: int, held_by: int) -> bool:
    """True when a prefix or phrase held by `held_by` of `total` notes is too broad to rank."""
    return held_by > BROAD_MIN and held_by > BROAD_SHARE * total


@dataclass(frozen=True)
class Bounds:
    """The broad prefixes and phrases of a query (as typed), with the notes holding each (a
    phrase's: those holding all its words, an upper bound)."""

    prefixes: dict[str, int]
    phrases: dict[str, int]

    def __bool__(self) -> bool:
        return bool(self.prefixes or self.phrases)

    def narrower(self, q: ParsedQuery) -> ParsedQuery:
        """The query without its broad prefixes (its broad phrases stay: they are required)."""
        return replace(q, prefixes=tuple(p for p in q.prefixes if p not in self.prefixes))

    def unranked(self) -> set[str]:
        """The ranked expressions (bm25.ranked_phrases) of the broad phrases."""
        return {quote(p) for p in self.phrases}

    def windowed_words(self) -> list[str]:
        """The words a broad phrase is ranked by within the window."""
        return list(dict.fromkeys(w for p in self.phrases for w in phrase_words(p)))

    def set_aside(self) -> str:
        """The notice when something narrower ranks the results instead."""
        return (
            f"{self._names()} {self._held()}, too many to rank by: the query's other words"
            " rank the results" + (" (the phrase is still required)" if self.phrases else "")
        )

    def windowed(self, total: int) -> str:
        """The notice when the ranking was kept to the RANK_CAP newest notes."""
        hint = "a longer prefix or another word" if self.prefixes else "another word"
        return (
            f"{self._names()} {self._held()} of {total:,}: ranked within the {RANK_CAP:,}"
            f" newest notes only; {hint} ranks them all"
        )

    def _names(self) -> str:
        names = [f"{p}*" for p in self.prefixes] + [f'"{p}"' for p in self.phrases]
        return " and ".join(names)

    def _held(self) -> str:
        counts = list(self.prefixes.values()) + list(self.phrases.values())
        verb = "is" if len(counts) == 1 else "are"
        if self.phrases:
            return f"{verb} in more than {BROAD_MIN:,} notes"
        return f"{verb} in {max(counts):,} notes"


def broad_prefixes(q: ParsedQuery, total: int, counts: dict[str, int]) -> dict[str, int]:
    """The broad prefixes of `q` and the notes holding each; `counts` maps each ranked
    expression (`"pre"*`) to the notes holding it."""
    held = {p: counts[quote(p) + "*"] for p in q.prefixes}
    return {p: n for p, n in held.items() if is_broad(total, n)}
