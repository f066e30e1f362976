"""The sync run: push the outbox, pull changes by cursor, push what merging produced.

The engine owns the network half (the Convex client, ordering, when to stop); everything
that touches the index or the vault is a call on `LocalSide`, made through `run_local` so
the daemon can run it on its single writer thread while the event loop stays free.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from engram.store.sync import Op
from engram.sync.client import ConvexClient, ConvexError, Rejected
from engram.sync.pager import Pager, PullLimits
from engram.sync.remote import change_problem, fields_problem, kind

T = TypeVar("T")
RunLocal = Callable[..., Awaitable[Any]]
PAGE = 100
BATCH = 50
SENDS_PER_FACT = 5


@dataclass
class SyncReport:
    """What one run did; `error` is set when it stopped early (the outbox keeps the rest)."""

    pushed: int = 0
    unchanged: int = 0
    deleted: int = 0
    merged: int = 0
    conflicts: int = 0
    parked: int = 0
    pulled: int = 0
    created: int = 0
    updated: int = 0
    archived: int = 0
    skipped: int = 0
    deferred: int = 0  # remote changes left for the next run (a write of ours in flight)
    rejected: int = 0  # remote changes that cannot be applied here (parked, shown by status)
    retries: int = 0
    error: str | None = None
    stopped: str | None = None  # why the pull ended before Convex said it was done
    hint: str | None = None
    notes: list[str] = field(default_factory=list)

    def add(self, counts: dict[str, int]) -> None:
        """Add the counts a local step returned."""
        for key, value in counts.items():
            setattr(self, key, getattr(self, key) + value)

    def summary(self) -> str:
        """One line for people."""
        parts = [
            f"pushed {self.pushed}",
            f"pulled {self.pulled} (created {self.created}, updated {self.updated}, "
            f"archived {self.archived})",
        ]
        for name in ("deleted", "merged", "conflicts", "parked", "rejected", "deferred", "retries"):
            if getattr(self, name):
                parts.append(f"{name} {getattr(self, name)}")
        if self.error:
            return ", ".join(parts) + f"; stopped: {self.error}"
        if self.stopped:
            return ", ".join(parts) + f"; pull stopped early ({self.stopped}): the next run goes on"
        return ", ".join(parts)


class LocalSide(Protocol):
    """The vault-and-index half of sync, for one vault (blocking calls)."""

    device: str

    def prepare(self) -> None:
        """Queue facts that never synced (made before sync was set up)."""

    def outbox(self, limit: int) -> list[Op]:
        """Ops to send, oldest first."""

    def attempt(self, op: Op) -> None:
        """Record that `op` is being sent (its op id and payload are now fixed)."""

    def base_version(self, fact_id: str) -> int:
        """The version last agreed for a fact (0: Convex must not have it yet)."""

    def delete_wanted(self, op: Op) -> bool:
        """False when a queued delete is moot (the note is back, or only moved)."""

    def acknowledged(self, op: Op, result: dict[str, Any]) -> dict[str, int]:
        """Convex accepted `op`."""

    def conflict(self, op: Op, current: dict[str, Any] | None) -> dict[str, int]:
        """Convex holds another version: merge, or keep both, and queue what is left."""

    def park(self, op: Op, error: str) -> None:
        """Convex refused `op` as invalid: keep it aside and show it."""

    def reject(self, bad: list[tuple[dict[str, Any], str]]) -> None:
        """Remote changes that cannot be applied here, with why: keep them aside and show them."""

    def cursor(self) -> str | None:
        """Where the last pull stopped."""

    def apply(self, changes: list[dict[str, Any]], next_cursor: str) -> dict[str, int]:
        """Bring the vault in step with a page of remote changes, then move the cursor."""

    def finish(self, error: str | None, stopped: str | None) -> None:
        """Record the end of a run: its error, or why its pull stopped early."""


class SyncEngine:
    """Push, pull, push: one run for one vault, its pull within `limits`."""

    def __init__(
        self,
        client: ConvexClient,
        local: LocalSide,
        run_local: RunLocal,
        limits: PullLimits | None = None,
    ) -> None:
        self.client = client
        self.local = local
        self.run_local = run_local
        self.limits = limits or PullLimits()

    async def _local(self, fn: Callable[..., T], *args: Any) -> T:
        result: T = await self.run_local(functools.partial(fn, *args))
        return result

    async def run(self, push: bool = True, pull: bool = True) -> SyncReport:
        """One sync run; a network or auth failure ends it with `error` set."""
        report = SyncReport()
        try:
            async with self.client:
                if push:
                    await self.push(report)
                if pull:
                    await self.pull(report)
                if push and pull:
                    await self.push(report)  # what merges during the pull produced
        except ConvexError as exc:
            report.error, report.hint = exc.message, exc.hint
        except Exception as exc:  # a fault of ours: shown by `sync status` too, then raised
            failed = f"sync failed: {type(exc).__name__}: {exc}"[:300]
            await self._local(self.local.finish, failed, None)
            raise
        report.retries = self.client.retries
        await self._local(self.local.finish, report.error, report.stopped)
        return report

    async def push(self, report: SyncReport) -> None:
        """Send the outbox in order until it is empty. Any backlog goes out in one run; only
        a fact sent SENDS_PER_FACT times in a run (a writer that keeps conflicting with us)
        ends the push, so a run always ends."""
        await self._local(self.local.prepare)
        sent: Counter[str] = Counter()
        while True:
            ops = await self._local(self.local.outbox, BATCH)
            if not ops:
                return
            for op in ops:
                sent[op.fact_id] += 1
                if sent[op.fact_id] > SENDS_PER_FACT:
                    report.notes.append("a fact keeps changing in Convex: it goes in the next run")
                    return
                await self._send(op, report)

    async def _send(self, op: Op, report: SyncReport) -> None:
        if op.kind == "delete" and not await self._local(self.local.delete_wanted, op):
            await self._local(self.local.acknowledged, op, {"status": "moot"})
            return
        base = await self._local(self.local.base_version, op.fact_id)
        await self._local(self.local.attempt, op)
        args: dict[str, Any] = {"opId": op.op_id, "device": self.local.device}
        if op.kind == "delete":
            path, args["externalId"] = "facts:softDelete", op.fact_id
        else:
            path, args["fact"] = "facts:upsert", op.payload
        args["baseVersion"] = base
        try:
            result = await self.client.mutation(path, args)
        except Rejected as exc:
            await self._local(self.local.park, op, exc.message)
            report.parked += 1
            return
        status = result.get("status") if isinstance(result, dict) else None
        problem = _conflict_problem(op, result) if status == "conflict" else None
        if status in ("ok", "not_found"):
            report.add(await self._local(self.local.acknowledged, op, result))
        elif status == "conflict" and problem is None:
            report.add(await self._local(self.local.conflict, op, result.get("current")))
        else:
            why = problem or f"unexpected reply: {kind(result)}"
            await self._local(self.local.park, op, f"{path}: {why}")
            report.parked += 1

    async def pull(self, report: SyncReport) -> None:
        """Apply remote changes page by page within the limits; the cursor moves with each
        applied page, past the changes that cannot be applied (those are kept aside)."""
        pager = Pager(self.client, await self._local(self.local.cursor), PAGE, self.limits)
        async with contextlib.aclosing(pager.pages()) as pages:
            async for page in pages:
                good, bad = [], []
                for change in page.changes:
                    problem = change_problem(change)
                    if problem is None:
                        good.append(change)
                    else:
                        bad.append((change, problem))
                if bad:
                    await self._local(self.local.reject, bad)
                    report.rejected += len(bad)
                cursor = page.next_cursor or pager.cursor or ""
                counts = await self._local(self.local.apply, good, cursor)
                report.add(counts)
                if counts.get("deferred"):
                    report.notes.append("some remote changes wait until our writes are confirmed")
                    return
        report.stopped = pager.stopped


def _conflict_problem(op: Op, result: dict[str, Any]) -> str | None:
    """Why a conflict reply's `current` (Convex's version of the fact) cannot be merged."""
    current = result.get("current")
    if current is None:
        return None
    if not isinstance(current, dict):
        return f"a conflict whose current fact is {kind(current)}"
    if current.get("externalId") != op.fact_id:
        return "a conflict about another fact"
    problem = fields_problem(current)
    return f"a conflict whose current fact is not usable: {problem}" if problem else None
