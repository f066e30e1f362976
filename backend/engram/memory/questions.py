"""The fact type a recall question asks about: "what did we decide" → decisions.

Read after the time words are taken out (memory/timewords.py), so "what did we decide last
week about pricing" asks for decisions about pricing in last week's window. Only whole
question forms count, never a lone noun, so "decision matrix" is still two search words.
English and German, table-driven.
"""

from __future__ import annotations

import re

_WHO = r"(?:we|i|you|they)"
_WER = r"(?:wir|ich|sie|du|ihr)"
_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("decision", rf"what (?:did|do|have|had) {_WHO} (?:decide|decided)(?: (?:on|about|to))?"),
    ("decision", r"what (?:was|were|has been|have been|had been|got) decided(?: (?:on|about))?"),
    (
        "decision",
        rf"(?:what|which|any|our|the) decisions?(?: (?:did|have|had) {_WHO} "
        r"(?:make|made|take|taken|took))?(?: (?:on|about))?",
    ),
    ("decision", rf"decisions? {_WHO} (?:made|took)(?: (?:on|about))?"),
    ("decision", rf"was (?:haben|hatten) {_WER} (?:entschieden|beschlossen)"),
    ("decision", r"was wurde (?:entschieden|beschlossen)"),
    ("decision", r"welche entscheidungen(?: (?:haben|hatten) (?:wir|ich|sie) getroffen)?"),
    (
        "commitment",
        rf"what (?:did|have|had) {_WHO} (?:promise|promised|commit to|committed to)",
    ),
    ("commitment", r"(?:what|which|any|our|open) commitments?"),
    ("commitment", rf"was (?:haben|hatten) {_WER} (?:versprochen|zugesagt)"),
    ("preference", rf"what (?:do|did|does) {_WHO} prefer"),
    ("preference", r"(?:what|which|any|our|my) preferences?"),
)
_FOUND = [(kind, re.compile(rf"(?<![\w-]){form}(?![\w-])", re.I)) for kind, form in _QUESTIONS]


def asked_type(query: str) -> tuple[str | None, str]:
    """The fact type the query's question asks for (or None) and the query without the
    question's words (the first question found counts)."""
    for kind, pattern in _FOUND:
        m = pattern.search(query)
        if m:
            rest = query[: m.start()] + " " + query[m.end() :]
            return kind, " ".join(rest.split())
    return None, query
