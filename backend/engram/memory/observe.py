"""Scoring raw transcript lines into ledger observations (not facts).

Each raw line with text becomes one observation line in the day's ledger,
`- [type|c=0.50|i=0.85] text (raw agent/YYYY/MM/DD.jsonl:N) ^raw-<id>`, typed and scored by
the same keyword rules as facts (`memory.infer`). The `(raw …)` pointer names the file and
line it came from; a line already observed is recognised by it, so observing a day twice
adds nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from engram.memory import ledger
from engram.memory.infer import infer_importance, infer_type
from engram.memory.ledger_raw import RawLine
from engram.memory.model import LEDGER_FOLDER

CONFIDENCE = 0.5  # inferred from a transcript, not asserted by anyone
_RAW_PREFIX = f"{LEDGER_FOLDER}/raw/"


@dataclass(frozen=True)
class ObserveResult:
    """What an observe run did for one day."""

    day: dt.date
    path: str  # the observations file
    scanned: int  # raw lines read
    added: int  # observation lines written
    skipped: int  # raw lines without text, or already observed
    bad_lines: tuple[str, ...] = ()  # `file:N why` of unreadable raw lines


def pointer(line: RawLine) -> str:
    """`agent/YYYY/MM/DD.jsonl:N` for a raw line (its path below `ledger/raw/`)."""
    _, _, tail = line.path.partition(_RAW_PREFIX)
    return f"{tail or line.path}:{line.number}"


def observation(line: RawLine) -> ledger.Observation | None:
    """The observation a raw line gives, None when it has no text."""
    text = ledger.one_line(line.entry.text)
    if not text:
        return None
    kind = infer_type(text)
    return ledger.Observation(
        kind, CONFIDENCE, infer_importance(text, kind), text, raw=pointer(line)
    )


def observed(existing: str | None) -> set[str]:
    """The raw pointers already in an observations file."""
    if not existing:
        return set()
    return {o.raw for o in ledger.parse(existing) if o.raw}


def merge(existing: str | None, lines: Iterable[RawLine], day: dt.date) -> tuple[str, int]:
    """The observations file with a line for each raw line not yet observed; lines added."""
    seen = observed(existing)
    text, added = existing, 0
    for line in lines:
        obs = observation(line)
        if obs is None or obs.raw in seen:
            continue
        text = ledger.merge(text, obs, day)
        seen.add(obs.raw or "")
        added += 1
    return text if text is not None else "", added
