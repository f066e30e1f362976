"""What follows a fact note's own write: indexing it, its ledger line, its daily note.

A fact is stored once its note is written, and what follows never turns that into an error.
The follow-ups are recorded as pending in the index (store/followups.py) before the note is
written and cleared once done. One that meets a conflict (a program saving the daily note at
that instant) is tried again a few times; one that still fails becomes a warning on the
result and stays pending, like everything a process killed between its note and its
follow-ups leaves behind. `heal` does them: on a process's first use of memory (a daemon's at
start-up: its reader threads never write), after every update (so the daemon's index jobs)
and before every fact write. It reads only the pending rows, never every fact.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram.errors import ConflictError, EngramError, InvalidInputError, storage_error
from engram.memory import daily, ledger
from engram.memory.model import Fact, iso
from engram.store import facts as facts_store
from engram.store import followups

if TYPE_CHECKING:
    from engram.service.core import Core
    from engram.service.memory import MemoryService, VaultCtx

log = logging.getLogger(__name__)
RETRY_DELAYS = (0.02, 0.1, 0.4)  # seconds between rounds of merges that met a conflict
STALE = dt.timedelta(minutes=15)  # a pending row this old is no live write's (pids recur)
LATER = "the next engram command that uses memory does it"


@dataclass(frozen=True)
class Planned:
    """A fact note about to be written: the notes to index after, the hash it will have."""

    fact_id: str
    paths: tuple[str, ...]
    sha256: str | None = None


class FollowUps:
    """The follow-ups of fact writes: done after the write, recorded until done, healed."""

    def __init__(self, core: Core, memory: MemoryService) -> None:
        self._core = core
        self._memory = memory
        self._own: set[str] = set()  # facts this process is writing right now
        self._busy = 0  # in a write or a heal: the updates they run do not heal

    def write(
        self, v: VaultCtx, planned: Sequence[Planned], write: Callable[[], object]
    ) -> tuple[list[Fact | None], tuple[str, ...]]:
        """`write` (the notes' own all-or-nothing write, whose error is the caller's) with
        its follow-ups recorded as pending before it and done after it: the facts as now
        indexed (None where the index could not say), and warnings for what failed."""
        ids = [p.fact_id for p in planned]
        now = iso(_now())
        with self._core.db.write() as conn:  # a full index fails here, before any note
            items = [(p.fact_id, p.paths, p.sha256) for p in planned]
            followups.intend(conn, v.name, items, os.getpid(), now)
        self._busy += 1
        self._own.update(ids)
        try:
            try:
                write()
            except Exception:
                self._settle(ids, again=False)  # the journal took the write back
                raise
            warnings = self._index(v, planned)
            facts = [self._fact(v, fid) for fid in ids]
            more, again = self._record(v, [f for f in facts if f is not None])
            self._settle(ids, again or bool(warnings))
        finally:
            self._busy -= 1
            self._own.difference_update(ids)
        return facts, tuple(warnings + more)

    def record(self, v: VaultCtx, *facts: Fact) -> tuple[str, ...]:
        """Bring the facts' ledger lines and daily notes in step with them; what failed is
        returned as warnings and left pending (sync's local side uses this too)."""
        warnings, again = self._record(v, list(facts))
        if again:
            try:
                with self._core.db.write() as conn:
                    items = [(f.id, (), None) for f in facts]
                    followups.intend(conn, v.name, items, None, iso(_now()))
            except Exception as exc:  # the index is full or read-only: said once, here
                log.warning("%s: could not note what is left to do: %s", v.name, self._why(exc))
        return tuple(warnings)

    def index(self, v: VaultCtx, planned: Sequence[Planned]) -> None:
        """Index notes Engram just wrote, remembering the hashes so they are not taken for a
        person's edits (before indexing for existing facts, after it for new ones)."""
        marks = [(p.fact_id, p.sha256) for p in planned if p.sha256]
        self._mark(marks)
        self._memory.index(v, {path for p in planned for path in p.paths})
        self._mark(marks)

    def heal(self, v: VaultCtx | None = None) -> None:
        """Do the follow-ups that a dead process or a failed attempt left (of every vault,
        or of `v`); nothing happens inside a write or another heal."""
        if self._busy:
            return
        try:
            rows = followups.pending(self._core.db.conn, v.name if v else None)
        except Exception as exc:  # an index that cannot be read fails the command anyway
            log.debug("could not look for unfinished fact writes: %s", self._why(exc))
            return
        left = [r for r in rows if self._abandoned(r)]
        if not left:
            return
        self._busy += 1
        try:
            for name in dict.fromkeys(r.collection for r in left):
                ctx = v or self._vault(name)
                todo = [r for r in left if r.collection == name]
                if ctx is None:  # the vault is no longer configured: nothing to bring in step
                    self._settle([r.fact_id for r in todo], again=False)
                    continue
                self._heal_vault(ctx, todo)
        finally:
            self._busy -= 1

    def _heal_vault(self, v: VaultCtx, rows: list[followups.Pending]) -> None:
        planned = [
            Planned(r.fact_id, r.paths, r.sha256 if self._as_written(v, r) else None) for r in rows
        ]
        warnings = self._index(v, planned)
        facts = {r.fact_id: self._fact(v, r.fact_id) for r in rows}
        found = [f for f in facts.values() if f is not None]
        more, again = self._record(v, found)
        for warning in warnings + more:
            log.warning("%s: %s", v.name, warning)
        gone = [fid for fid, f in facts.items() if f is None]  # no note was ever written
        self._settle(gone, again=bool(warnings))
        self._settle([f.id for f in found], again or bool(warnings))
        if found and not (again or warnings):
            log.info("%s: did what %d interrupted fact writes left undone", v.name, len(found))

    def _abandoned(self, row: followups.Pending) -> bool:
        """Nobody is doing this row's follow-ups: its process is gone, or it was left."""
        if row.pid is None:
            return True
        if row.pid == os.getpid():
            return row.fact_id not in self._own
        since = dt.datetime.fromisoformat(row.since.replace("Z", "+00:00"))
        return _now() - since > STALE or not _alive(row.pid)

    def _as_written(self, v: VaultCtx, row: followups.Pending) -> bool:
        """Does a note of the row hold exactly what Engram wrote (no one edited it since)?"""
        notes = (v.notes.read(p) for p in row.paths)
        return row.sha256 is not None and any(n and n.sha256 == row.sha256 for n in notes)

    def _index(self, v: VaultCtx, planned: Sequence[Planned]) -> list[str]:
        try:
            self.index(v, planned)
        except Exception as exc:
            _log_unexpected(exc)
            why = self._why(exc)
            return [f"the fact's note is stored but not indexed yet ({why}); {LATER}"]
        return []

    def _fact(self, v: VaultCtx, fact_id: str) -> Fact | None:
        row = facts_store.by_id(self._core.db.conn, fact_id)
        if row is None or row["collection"] != v.name:
            return None
        return self._memory.fact_from_row(v, row, fresh=True)

    def _record(self, v: VaultCtx, facts: list[Fact]) -> tuple[list[str], bool]:
        """The ledger lines and daily notes of `facts`: (warnings, whether to try again)."""
        days: dict[dt.date, list[Fact]] = {}
        for fact in facts:
            days.setdefault(fact.timestamp.date(), []).append(fact)
        warnings: list[str] = []
        again = False
        touched: set[str] = set()
        for day, group in days.items():
            for path, subject, step, fix in self._steps(v, day, group):
                changed, warning, later = self._attempt(step, path, subject, fix)
                touched.update([path] if changed else [])
                warnings += [warning] if warning else []
                again = again or later
        if touched:
            try:
                self._memory.index_generated(v, touched)
            except Exception as exc:
                _log_unexpected(exc)
                warnings.append(
                    f"the ledger and daily notes are not indexed yet ({self._why(exc)})"
                )
                again = True
        return warnings, again

    def _steps(
        self, v: VaultCtx, day: dt.date, facts: list[Fact]
    ) -> list[tuple[str, str, Callable[[], bool], str]]:
        """A day's follow-ups: (file, what in it, the step, how a person unblocks it)."""
        obs = [
            ledger.Observation(f.fact_type, f.confidence, f.importance, f.text, f.id[:8])
            for f in facts
        ]
        rel = ledger.ledger_path(v.facts_root, day)
        fold = functools.partial(_fold, obs=obs, day=day)

        def line() -> bool:
            return v.notes.merge(rel, fold) is not None

        def note() -> bool:
            return self._memory.write_daily(v, day, index=False)[2]

        redo = f", then run engram daily {day.isoformat()}"
        return [
            (rel, "the fact's ledger line", line, ""),
            (daily.daily_path(v.facts_root, day), "the daily note", note, redo),
        ]

    def _mark(self, marks: list[tuple[str, str]]) -> None:
        if marks:
            with self._core.db.write() as conn:
                for fact_id, sha in marks:
                    facts_store.mark_written(conn, fact_id, sha)

    def _settle(self, ids: list[str], again: bool) -> None:
        """Forget the rows of `ids` (done), or leave them to the next process (`again`)."""
        if not ids:
            return
        try:
            with self._core.db.write() as conn:
                (followups.release if again else followups.done)(conn, ids)
        except Exception as exc:  # they stay pending; the next process does them again
            log.warning("could not update the record of unfinished fact writes: %s", self._why(exc))

    def _vault(self, name: str) -> VaultCtx | None:
        try:
            return self._memory.vault(name)
        except EngramError:
            return None

    def _attempt(
        self, step: Callable[[], bool], path: str, subject: str, fix: str
    ) -> tuple[bool, str | None, bool]:
        """`step` (True when it changed `path`), tried again after a conflict: (changed, warning,
        whether a later run should try again); `fix` ends a warning about a person's edit."""
        delays = iter(RETRY_DELAYS)
        while True:
            try:
                return step(), None, False
            except ConflictError:
                delay = next(delays, None)
                if delay is None:
                    why = "the file kept changing while Engram wrote it"
                    return False, f"{path}: {subject} is not written yet ({why}); {LATER}", True
                time.sleep(delay)
            except InvalidInputError as exc:  # a person's edit (damaged markers, broken YAML)
                return False, f"{path} was left as it is: {exc.message}{fix}", False
            except Exception as exc:
                _log_unexpected(exc)
                return (
                    False,
                    f"{path}: {subject} is not written yet ({self._why(exc)}); {LATER}",
                    True,
                )

    def _why(self, exc: BaseException) -> str:
        """An error in a few words: a storage or domain error's message, else its type and
        text."""
        found = storage_error(exc, self._core.settings.db_path)
        if found is not None:
            return found.message
        if isinstance(exc, EngramError):
            return exc.message
        return f"{type(exc).__name__}: {exc}"


def _log_unexpected(exc: BaseException) -> None:
    """An error that is neither a domain nor a storage error is a bug: keep its traceback."""
    if not isinstance(exc, EngramError) and storage_error(exc) is None:
        log.warning("a follow-up of a fact write failed", exc_info=exc)


def _now() -> dt.datetime:
    """The time pending rows are stamped with: the machine's, not the facts' clock."""
    return dt.datetime.now(dt.UTC)


def _alive(pid: int) -> bool:
    """Is there a process with this id (on this machine)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's
    except OSError:
        return False
    return True


def _fold(old: str | None, obs: list[ledger.Observation], day: dt.date) -> str:
    text = old
    for one in obs:
        text = ledger.merge(text, one, day)
    return text or ""
