"""Weekly reflections: gather a week from the index and the ledger, write its note.

Composed into `Engram` like the ledger service; it receives what it needs in its
constructor and calls nothing private of the facade.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engram.errors import InvalidInputError
from engram.memory import daily, dates, ledger_raw, reflect
from engram.memory.model import LIVE_STATES
from engram.memory.reflect import Item, Week, WeekFacts
from engram.store import activity
from engram.store import facts as facts_store
from engram.vault.fsio import safe_join

if TYPE_CHECKING:
    from engram.service.memory import VaultCtx
    from engram.store.db import Database

MAX_RAW_BYTES = 64 * 1024 * 1024  # lines counted per transcript file


@dataclass(frozen=True)
class ReflectResult:
    """What `engram reflect` did."""

    week: str
    path: str
    facts: int
    written: bool


def week_from(text: str | None, today: dt.date) -> Week:
    """`2026-W10`, a date, or a phrase (`last week`): that week; None: the last ended week."""
    if not text:
        return reflect.week_of(today - dt.timedelta(days=7))
    if text.strip().upper().startswith(tuple("0123456789")) and "-W" in text.upper():
        return reflect.parse_week(text.upper())
    if len(text) > 100:
        raise InvalidInputError("the week is too long")
    rng = dates.parse_range(text, today)
    if rng.since is None:
        raise InvalidInputError(f"{text!r} does not name a week", "write it like 2026-W10")
    return reflect.week_of(rng.since)


def _item(row: Any) -> Item:
    try:
        fm = json.loads(row["frontmatter"] or "{}")
    except ValueError:
        fm = {}
    fm = fm if isinstance(fm, dict) else {}
    contra = fm.get("contradictsWith")
    return Item(
        id=str(row["id"]),
        title=str(row["title"]),
        fact_type=str(row["fact_type"]),
        importance=float(row["importance"]),
        link_target=str(row["path"]).removesuffix(".md"),
        created_by=str(fm.get("createdBy") or "unknown"),
        lifecycle=str(row["lifecycle"]),
        superseded_by=row["superseded_by"],
        contradicts=len(contra) if isinstance(contra, list) else (1 if contra else 0),
    )


class ReflectService:
    """reflect (a week's note), and the one the daemon writes when a week has ended."""

    def __init__(
        self,
        vault: Callable[[str | None], VaultCtx],
        clock: Callable[[], dt.datetime],
        index: Callable[[VaultCtx, Iterable[str]], None],
        db: Callable[[], Database],
    ) -> None:
        self._vault = vault
        self._clock = clock
        self._index = index
        self._db = db

    def gather(self, v: VaultCtx, week: Week) -> WeekFacts:
        """A week's facts, commitments, recalls and transcript lines."""
        conn = self._db().conn
        since, until = week.start.isoformat(), week.end.isoformat()
        states = ("active", "dormant", "merged", "archived")
        q = facts_store.FactQuery(collection=v.name, states=states, since=since, until=until)
        facts = [_item(r) for r in facts_store.query(conn, q)]
        open_q = facts_store.FactQuery(
            collection=v.name, types=("commitment",), states=LIVE_STATES, until=until
        )
        commitments = [_item(r) for r in facts_store.query(conn, open_q)]
        start = f"{since}T00:00:00Z"
        top = activity.most_accessed(conn, v.name, start, f"{until}T00:00:00Z", 20)
        by_id = {
            str(r["id"]): _item(r)
            for r in facts_store.query(
                conn, facts_store.FactQuery(collection=v.name, ids=tuple(i for i, _ in top))
            )
        }
        recalled = [(by_id[i], n) for i, n in top if i in by_id]
        raw: dict[str, int] = {}
        for day in week.days():
            for agent, rel in ledger_raw.day_files(v.root, v.facts_root, day):
                with safe_join(v.root, rel).open("rb") as fh:
                    raw[agent] = raw.get(agent, 0) + fh.read(MAX_RAW_BYTES).count(b"\n")
        days = [
            (day, daily.daily_path(v.facts_root, day).removesuffix(".md"))
            for day in week.days()
            if v.notes.exists(daily.daily_path(v.facts_root, day))
        ]
        recalls = activity.recalls(conn, v.name, since, until)
        return WeekFacts(week, facts, commitments, recalled, recalls, raw, days)

    def reflect(self, week: str | None = None, vault: str | None = None) -> ReflectResult:
        """Regenerate a week's reflection (default: the last week that ended)."""
        v = self._vault(vault)
        w = week_from(week, self._clock().date())
        data = self.gather(v, w)
        rel = reflect.reflection_path(v.facts_root, w)
        written = v.notes.merge(rel, lambda old: reflect.merge(old, data)) is not None
        if written:
            self._index(v, {rel})
        return ReflectResult(w.label, rel, len(data.facts), written)

    def due(self, vault: str | None = None) -> ReflectResult | None:
        """The last ended week's reflection when it does not exist yet and something happened
        that week (the daemon's check)."""
        v = self._vault(vault)
        w = week_from(None, self._clock().date())
        if v.notes.exists(reflect.reflection_path(v.facts_root, w)):
            return None
        data = self.gather(v, w)
        if not (data.facts or data.recalls or data.raw_lines):
            return None  # a week nothing happened in gets no note
        return self.reflect(w.label, v.name)
