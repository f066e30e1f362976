"""The raw transcript ledger and observe runs: a small service composed into `Engram`.

It receives what it needs (how to resolve a vault, a clock, how to index written notes) in
its constructor and calls nothing private of the facade.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from engram.errors import InvalidInputError
from engram.memory import archive, dates, ledger, ledger_raw, observe
from engram.memory.ledger_raw import MAX_LINES, AppendResult, decode_lines
from engram.memory.observe import ObserveResult

__all__ = ["MAX_LINES", "LedgerService", "decode_lines", "parse_day"]  # the CLI parses with it

if TYPE_CHECKING:
    from engram.service.memory import VaultCtx
    from engram.store.db import Database


def parse_day(text: str | None, today: dt.date) -> dt.date:
    """A single UTC day from a date or phrase (`2026-03-05`, `yesterday`); today if None."""
    if not text:
        return today
    if len(text) > 100:
        raise InvalidInputError("the day is too long")
    rng = dates.parse_range(text, today)
    if rng.since is None or rng.until is None or rng.until - rng.since != dt.timedelta(days=1):
        raise InvalidInputError(f"{text!r} is not a single day", "give a date like 2026-03-05")
    return rng.since


class LedgerService:
    """Append raw transcript lines; score them into observation lines."""

    def __init__(
        self,
        vault: Callable[[str | None], VaultCtx],
        clock: Callable[[], dt.datetime],
        index: Callable[[VaultCtx, Iterable[str]], None],
        db: Callable[[], Database],
        keep_days: Callable[[], int],
    ) -> None:
        self._vault = vault
        self._clock = clock
        self._index = index
        self._db = db
        self._keep_days = keep_days

    def append(
        self, agent: str, lines: Iterable[tuple[int, Any]], vault: str | None = None
    ) -> AppendResult:
        """Append JSON objects (line number, object) to the agent's raw ledger, all or none."""
        ledger_raw.check_agent(agent)
        v = self._vault(vault)
        entries = ledger_raw.parse_input(lines, ledger_raw.now_utc(self._clock))
        if not entries:
            raise InvalidInputError("nothing to append: give JSON lines with role and text")
        return ledger_raw.append(v.root, v.facts_root, agent, entries)

    def observe(
        self, agent: str | None = None, day: str | None = None, vault: str | None = None
    ) -> ObserveResult:
        """Score a day's raw lines (one agent's or all) into that day's observation lines."""
        v = self._vault(vault)
        when = parse_day(day, self._clock().date())
        raw_lines: list[ledger_raw.RawLine] = []
        bad: list[str] = []
        for _, rel in ledger_raw.day_files(v.root, v.facts_root, when, agent):
            good, broken = ledger_raw.read(v.root, rel)
            raw_lines += good
            bad += [f"{rel}:{n} {why}" for n, why in broken]
        rel = ledger.ledger_path(v.facts_root, when)
        current = v.notes.read(rel)
        pending = observe.merge(current.text if current else None, raw_lines, when)[1]
        added = 0

        def build(old: str | None) -> str:
            nonlocal added
            text, added = observe.merge(old, raw_lines, when)
            return text if added else (old or "")

        if pending and v.notes.merge(rel, build) is not None:
            self._index(v, {rel})
        else:
            added = 0  # all observed already: nothing was written
        scanned = len(raw_lines)
        return ObserveResult(when, rel, scanned, added, scanned - added, tuple(bad))

    def archive(self, dry_run: bool = False, vault: str | None = None) -> list[archive.Move]:
        """Move ledger days older than `memory.observations_keep_days` to the archive folder
        (each a journaled move; the notes stay indexed where they go)."""
        v = self._vault(vault)
        folder = v.notes.path(archive.live_folder(v.facts_root))
        files = [
            p.relative_to(v.root).as_posix()
            for p in sorted(folder.glob("*/*/*.md"))
            if p.is_file() and not p.is_symlink()
        ]
        moves = archive.due(v.facts_root, files, self._clock().date(), self._keep_days())
        if dry_run:
            return moves
        done = []
        for mv in moves:
            note = v.notes.read(mv.source)
            if note is None:
                continue
            where = v.notes.move(mv.source, mv.target, note.sha256)
            done.append(archive.Move(mv.day, mv.source, where))
        if done:
            self._index(v, {p for mv in done for p in (mv.source, mv.target)})
        return done
