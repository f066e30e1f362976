"""Checkpoint and wake: surviving a session that dies without saying goodbye.

`checkpoint` saves what the agent is working on to `<vault>/.engram/last-checkpoint.json`
(plus a copy under `.engram/checkpoints/`) and raises the dirty flag; `end-session` lowers
it. `wake` reports a dirty exit (the flag still up), the last checkpoint, and recent
observations thinned by age (the decay table below).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from engram import codec
from engram.codec import arg
from engram.errors import InvalidInputError
from engram.memory import ledger
from engram.memory.model import Fact, iso
from engram.vault.atomic import write_file

STATE_DIR = ".engram"
LAST = "last-checkpoint.json"
HISTORY = "checkpoints"
DIRTY = "dirty-exit.flag"
KEEP_HISTORY = 50

# age in days -> (tiers kept, how many at most per tier or None); beyond the table: nothing.
DECAY: tuple[tuple[range, dict[str, int | None]], ...] = (
    (range(0, 1), {"structural": None, "potential": None}),
    (range(1, 2), {"structural": None, "potential": 5}),
    (range(2, 4), {"structural": None}),
    (range(4, 7), {"structural": 3}),
)
WAKE_DAYS = 7


@dataclass(frozen=True)
class Checkpoint:
    """What the agent said it was doing, and when; its JSON is also the file's (the fields
    in this order)."""

    working_on: str
    focus: str | None = None
    blocked: str | None = None
    urgent: bool = False
    timestamp: dt.datetime = field(kw_only=True)  # in UTC, to the second


@dataclass(frozen=True)
class Recent:
    """Something wake may bring back: an observation or fact with its day and importance."""

    key: str = arg(local=True)  # fact id prefix or ledger position, for de-duplication
    day: dt.date = arg()
    tier: str = arg()
    importance: float = arg(wire="importanceScore")
    text: str = arg()
    fact_type: str = arg()
    ref: str | None = arg(None, wire="path")  # vault path when known
    age_days: int = 0  # days before the day wake ran (decay_select sets it)


def decay_select(items: Iterable[Recent], today: dt.date) -> list[Recent]:
    """Apply the decay table: today structural + potential; yesterday structural + top 5
    potential; 2-3 days structural; 4-6 days top 3 structural; older or contextual: none.
    "Top" is by importance, then newest. Result: newest band first, best first."""
    out: list[Recent] = []
    items = list(items)
    for days, keep in DECAY:
        band = [r for r in items if (today - r.day).days in days]
        for tier_name, limit in keep.items():
            chosen = sorted(
                (r for r in band if r.tier == tier_name),
                key=lambda r: (-r.importance, -r.day.toordinal(), r.key),
            )
            kept = chosen if limit is None else chosen[:limit]
            out.extend(replace(r, age_days=(today - r.day).days) for r in kept)
    return out


def gather(
    ledgers: dict[dt.date, str], live: dict[str, str], facts: Iterable[Fact]
) -> list[Recent]:
    """What wake chooses from: ledger lines (by day) and live facts without a line.

    `live` maps the 8-character id prefix of every live fact to its path; a ledger line
    tied to a fact that is no longer live (archived, merged, deleted) is dropped.
    """
    recent: dict[str, Recent] = {}
    for day, text in ledgers.items():
        for obs in ledger.parse(text, day):
            if obs.fact_ref and obs.fact_ref not in live:
                continue
            key = obs.fact_ref or f"{day}:{obs.line}"
            path = live.get(obs.fact_ref or "") or None
            recent[key] = Recent(key, day, obs.tier, obs.importance, obs.text, obs.fact_type, path)
    for f in facts:
        key = f.id[:8]
        if key not in recent:
            text = ledger.one_line(f.text)
            recent[key] = Recent(
                key, f.timestamp.date(), f.tier, f.importance, text, f.fact_type, f.path or None
            )
    return list(recent.values())


def state_dir(vault_root: Path) -> Path:
    """`<vault>/.engram`."""
    return vault_root / STATE_DIR


def save_checkpoint(vault_root: Path, cp: Checkpoint) -> Path:
    """Write the checkpoint and its history copy atomically, raise the dirty flag."""
    folder = state_dir(vault_root)
    text = json.dumps(codec.encode(cp), indent=2, ensure_ascii=False) + "\n"
    write_file(folder / LAST, text.encode("utf-8"), private=True)
    history = folder / HISTORY
    write_file(history / f"{cp.timestamp:%Y%m%dT%H%M%SZ}.json", text.encode("utf-8"), private=True)
    for old in sorted(history.glob("*.json"))[:-KEEP_HISTORY]:
        old.unlink(missing_ok=True)
    write_file(folder / DIRTY, (iso(cp.timestamp) + "\n").encode("utf-8"), private=True)
    return folder / LAST


def load_checkpoint(vault_root: Path) -> Checkpoint | None:
    """The last checkpoint, or None (missing or unreadable file)."""
    try:
        data = json.loads((state_dir(vault_root) / LAST).read_text(encoding="utf-8"))
        found: Checkpoint = codec.decode(Checkpoint, data)
    except (OSError, ValueError, InvalidInputError):
        return None
    when = found.timestamp  # naive (written by hand): UTC
    return found if when.tzinfo else replace(found, timestamp=when.replace(tzinfo=dt.UTC))


def is_dirty(vault_root: Path) -> bool:
    """True when the last session checkpointed and never ended cleanly."""
    return (state_dir(vault_root) / DIRTY).exists()


def clear_dirty(vault_root: Path) -> bool:
    """Lower the dirty flag; True when it was up."""
    flag = state_dir(vault_root) / DIRTY
    try:
        flag.unlink()
    except FileNotFoundError:
        return False
    return True
