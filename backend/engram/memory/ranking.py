"""Recall ranking and lifecycle math: pure functions (table-tested; see docs/memory.md).

    score = relevance × (0.3 + 0.7 × importance) × (0.3 + 0.7 × recency) × state weight
    recency = 0.5 ^ (age in days / half-life)

The floors (0.3) keep a very relevant fact findable when it is old or unimportant: importance
and age re-order results, relevance decides whether a fact is a result at all.
"""

from __future__ import annotations

import datetime as dt

IMPORTANCE_FLOOR = 0.3
RECENCY_FLOOR = 0.3
STATE_WEIGHT = {"active": 1.0, "dormant": 0.8, "merged": 0.5, "archived": 0.5, "pruned": 0.25}
NOTE_IMPORTANCE = 0.5  # ordinary notes (recall --notes) rank as if of middling importance


def recency(age_days: float, half_life_days: float) -> float:
    """1.0 now, 0.5 after one half-life, 0.25 after two; future dates count as now."""
    if half_life_days <= 0:
        return 1.0
    return float(0.5 ** (max(0.0, age_days) / half_life_days))


def age_days(moment: dt.datetime, now: dt.datetime) -> float:
    """Days between `moment` and `now` (fractional)."""
    return (now - moment).total_seconds() / 86400


def recall_score(
    relevance: float, importance: float, recent: float, state: str = "active"
) -> float:
    """relevance × importance weight × recency weight × lifecycle weight, all in 0..1."""
    w_imp = IMPORTANCE_FLOOR + (1 - IMPORTANCE_FLOOR) * _unit(importance)
    w_rec = RECENCY_FLOOR + (1 - RECENCY_FLOOR) * _unit(recent)
    return _unit(relevance) * w_imp * w_rec * STATE_WEIGHT.get(state, 1.0)


def next_state(
    state: str,
    tier: str,
    last_touch: dt.datetime,
    now: dt.datetime,
    dormant_after_days: int,
    archive_after_days: int,
) -> str | None:
    """The lifecycle state a fact should move to, or None to stay.

    active → dormant after `dormant_after_days` without a change or recall; dormant →
    archived after `archive_after_days` more (never automatically for structural facts);
    a dormant fact recalled or edited within the dormant window becomes active again.
    """
    idle = age_days(last_touch, now)
    if state == "active" and idle >= dormant_after_days:
        return "dormant"
    if state == "dormant":
        if idle < dormant_after_days:
            return "active"
        if tier != "structural" and idle >= dormant_after_days + archive_after_days:
            return "archived"
    return None


def _unit(x: float) -> float:
    return min(1.0, max(0.0, float(x)))
