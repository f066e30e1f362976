"""The observation archive: ledger days older than `memory.observations_keep_days` move from
`ledger/observations/YYYY/MM/DD.md` to `ledger/archive/observations/YYYY/MM/DD.md`.

They stay notes (indexed, searchable); only the live ledger that wake reads stays short.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

from engram.codec import arg
from engram.memory.model import LEDGER_FOLDER

_DAY = re.compile(r"^(\d{4})/(\d{2})/(\d{2})\.md$")


@dataclass(frozen=True)
class Move:
    """One ledger day to archive."""

    day: dt.date
    source: str = arg(wire="from")  # vault-relative
    target: str = arg(wire="to")


def live_folder(facts_root: str) -> str:
    """Where the live observation ledger is."""
    return f"{facts_root}/{LEDGER_FOLDER}/observations"


def archive_folder(facts_root: str) -> str:
    """Where archived ledger days go."""
    return f"{facts_root}/{LEDGER_FOLDER}/archive/observations"


def due(facts_root: str, files: Iterable[str], today: dt.date, keep_days: int) -> list[Move]:
    """The ledger days (vault-relative `files` under the live folder) older than
    `keep_days` before `today`, oldest first; files not named YYYY/MM/DD.md stay."""
    live = live_folder(facts_root) + "/"
    cutoff = today - dt.timedelta(days=keep_days)
    out = []
    for rel in files:
        if not rel.startswith(live):
            continue
        m = _DAY.fullmatch(rel[len(live) :])
        if m is None:
            continue
        try:
            day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            continue
        if day < cutoff:
            out.append(Move(day, rel, f"{archive_folder(facts_root)}/{rel[len(live) :]}"))
    return sorted(out, key=lambda mv: mv.source)
