"""Type and importance inference from a fact's words (no model needed).

Rules are tried in order; the first whose keywords appear (whole words, any case) decides.
Decisions and commitments come first because they are the facts an agent must not lose;
"never again" is a lesson before "never" can make it a steering rule.
"""

from __future__ import annotations

import re

from engram.memory.model import DEFAULT_TYPE

TYPE_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "decision",
        (
            "decided",
            "decide to",
            "decision",
            "chose",
            "chosen",
            "opted",
            "went with",
            "settled on",
            "selected",
            "agreed to use",
            "we will use",
            "going with",
        ),
    ),
    (
        "commitment",
        (
            "committed",
            "commit to",
            "promised",
            "promise to",
            "deadline",
            "due by",
            "due on",
            "will deliver",
            "i will",
            "we will",
            "owe",
            "by eod",
            "by end of",
        ),
    ),
    (
        "lesson",
        (
            "learned",
            "learnt",
            "lesson",
            "realized",
            "realised",
            "never again",
            "takeaway",
            "turns out",
            "in hindsight",
            "next time",
        ),
    ),
    ("correction", ("correction", "corrected", "was wrong", "is wrong", "not correct", "mistake")),
    (
        "error",
        (
            "error",
            "bug",
            "failed",
            "failure",
            "crash",
            "crashed",
            "exception",
            "broken",
            "traceback",
            "regression",
        ),
    ),
    (
        "preference",
        (
            "prefer",
            "prefers",
            "preferred",
            "preference",
            "likes",
            "dislikes",
            "favorite",
            "favourite",
            "rather than",
        ),
    ),
    ("steering_rule", ("always", "never", "must not", "do not", "don't", "should always", "rule:")),
    (
        "plan",
        (
            "plan to",
            "planning",
            "plan is",
            "next step",
            "next steps",
            "roadmap",
            "todo",
            "to do",
            "intend to",
            "going to",
        ),
    ),
    (
        "relationship",
        (
            "works with",
            "reports to",
            "manager of",
            "colleague",
            "teammate",
            "married",
            "partner of",
            "friend of",
            "is the ceo",
            "is the cto",
            "introduced me",
        ),
    ),
    (
        "feeling",
        (
            "feel",
            "feels",
            "felt",
            "frustrated",
            "happy",
            "excited",
            "worried",
            "anxious",
            "annoyed",
            "relieved",
        ),
    ),
    ("insight", ("insight", "noticed", "pattern", "it seems", "appears that", "key finding")),
    ("session_summary", ("session summary", "this session", "handoff", "hand-off")),
    ("project", ("project", "milestone", "launch", "kickoff", "epic")),
)

# Importance when none is given: by type, nudged by words that mark stakes.
TYPE_IMPORTANCE: dict[str, float] = {
    "decision": 0.8,
    "commitment": 0.8,
    "steering_rule": 0.85,
    "correction": 0.75,
    "lesson": 0.7,
    "learning": 0.7,
    "error": 0.65,
    "insight": 0.6,
    "preference": 0.6,
    "plan": 0.6,
    "project": 0.6,
    "session_summary": 0.6,
    "relationship": 0.5,
    "fact": 0.5,
    "observation": 0.4,
    "feeling": 0.3,
}
BOOST_WORDS = (
    "critical",
    "urgent",
    "important",
    "security",
    "production",
    "must",
    "blocker",
    "blocking",
    "deadline",
    "outage",
    "data loss",
)
DAMP_WORDS = ("maybe", "perhaps", "minor", "trivial", "fyi", "by the way", "not sure")
BOOST = 0.1


def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w])(?:{alternatives})(?![\w])", re.IGNORECASE)


_RULES = tuple((kind, _pattern(words)) for kind, words in TYPE_RULES)
_BOOST = _pattern(BOOST_WORDS)
_DAMP = _pattern(DAMP_WORDS)


def infer_type(text: str) -> str:
    """The fact type the text's keywords suggest; `observation` when none match."""
    for kind, pattern in _RULES:
        if pattern.search(text):
            return kind
    return DEFAULT_TYPE


def infer_importance(text: str, fact_type: str) -> float:
    """Default importance for a type, +0.1 for stakes words, -0.1 for hedges, within 0..1."""
    score = TYPE_IMPORTANCE.get(fact_type, 0.5)
    if _BOOST.search(text):
        score += BOOST
    if _DAMP.search(text):
        score -= BOOST
    return round(min(1.0, max(0.0, score)), 2)
