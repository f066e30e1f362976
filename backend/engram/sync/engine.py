"""The sync run: push the outbox, pull changes by cursor, push what merging produced.

The engine owns the network half (the Convex client, ordering, when to stop); everything
that touches the index or the vault is a call on `LocalSide`, made through `run_local` so
the daemon can run it on its single writer thread while the event loop stays free.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from engram.store.sync import Op
from engram.sync.client import ConvexClient, ConvexError, Rejected

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
    retries: int = 0
    error: str | None = None
    hint: str | None = None
    notes: list[str] = field(default_factory=list)

    def add(self, counts: dict[str, int]) -> None:
        """Add the counts a local step returned."""
        for key, value in counts.items():
            setattr(self, key, getattr(self, key) + value)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return dict(self.__dict__)

    def summary(self) -> str:
        """One line for people."""
        parts = [
            f"pushed {self.pushed}",
            f"pulled {self.pulled} (created {self.created}, updated {self.updated}, "
            f"archived {self.archived})",
        ]
        for name in ("deleted", "merged", "conflicts", "parked", "deferred", "retries"):
            if getattr(self, name):
                parts.append(f"{name} {getattr(self, name)}")
        return ", ".join(parts) + (f"; stopped: {self.error}" if self.error else "")


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

    def cursor(self) -> str | None:
        """Where the last pull stopped."""

    def apply(self, changes: list[dict[str, Any]], next_cursor: str) -> dict[str, int]:
        """Bring the vault in step with a page of remote changes, then move the cursor."""

    def finish(self, error: str | None) -> None:
        """Record the end of a run."""


class SyncEngine:
    """Push, pull, push: one run for one vault."""

    def __init__(self, client: ConvexClient, local: LocalSide, run_local: RunLocal) -> None:
        self.client = client
        self.local = local
        self.run_local = run_local

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
        report.retries = self.client.retries
        await self._local(self.local.finish, report.error)
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
        if status in ("ok", "not_found"):
            report.add(await self._local(self.local.acknowledged, op, result))
        elif status == "conflict":
            report.add(await self._local(self.local.conflict, op, result.get("current")))
        else:
            await self._local(self.local.park, op, f"unexpected reply from {path}: {result!r}")
            report.parked += 1

    async def pull(self, report: SyncReport) -> None:
        """Apply remote changes page by page; the cursor moves with each applied page."""
        cursor = await self._local(self.local.cursor)
        while True:
            page = await self.client.query(
                "facts:listChangedSince", {"cursor": cursor, "limit": PAGE}
            )
            changes = list(page.get("changes") or [])
            cursor = str(page.get("nextCursor") or cursor or "")
            counts = await self._local(self.local.apply, changes, cursor)
            report.add(counts)
            if counts.get("deferred"):
                report.notes.append("some remote changes wait until our writes are confirmed")
                return
            if page.get("isDone", True):
                return
