"""The daemon's Convex sync: a run every `interval` seconds, a run soon after facts change,
and a run on request (`POST /v1/sync`), never two at once.

The network half runs on the event loop; every index and note step of a run goes through
the daemon's one writer thread, so sync never races an index job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.server.jobs import JobRunner
from engram.service import Engram, SyncReport

if TYPE_CHECKING:
    from engram.service.sync import SyncStatus

log = logging.getLogger("engram.server")
POLL_SECONDS = 5.0  # how soon a fact change (a queued op) is pushed


class SyncLoop:
    """Keeps one vault's facts in step with Convex while the daemon runs."""

    def __init__(self, engram: Engram, collection: str, jobs: JobRunner) -> None:
        self.engram = engram
        self.collection = collection
        self.jobs = jobs
        self.running = False
        self.last: SyncReport | None = None
        self._lock = asyncio.Lock()
        self._next_full = 0.0  # monotonic time of the next periodic run
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin the periodic runs on this event loop."""
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="engram-sync")

    async def run_now(self, push: bool = True, pull: bool = True) -> SyncReport:
        """Run now (waiting for a run already going) and return its report."""
        async with self._lock:
            self.running = True
            try:
                engine = self.engram.sync_engine(self.collection, run_local=self.jobs.write)
                report = await engine.run(push=push, pull=pull)
            finally:
                self.running = False
        self.last = report
        if report.error:
            log.warning("sync stopped: %s", report.error)
        elif report.stopped:
            log.info("sync pull stopped early: %s", report.stopped)
        elif report.pushed or report.pulled:
            log.info("sync: %s", report.summary())
        interval = self._interval()
        self._next_full = time.monotonic() + (interval or 60)
        return report

    def status(self, base: SyncStatus) -> SyncStatus:
        """`GET /v1/status`'s sync part: the stored state, plus whether a run is going."""
        if base.configured and self.running:
            return replace(base, state="syncing")
        return base

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                if await self._due():
                    await self.run_now()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # never let a bad run end the loop
                log.warning("sync run failed: %s", type(exc).__name__)

    async def _due(self) -> bool:
        """A periodic run is due, or ops wait and the last run did not fail."""
        if self._interval() is None:
            return False
        if time.monotonic() >= self._next_full:
            return True
        if self.last is not None and self.last.error:
            return False  # offline or refused: wait for the periodic retry
        loop = asyncio.get_running_loop()
        pending = await loop.run_in_executor(None, self.engram.sync_pending, self.collection)
        return pending > 0

    def _interval(self) -> int | None:
        vault = self.engram.settings.vault(self.collection)
        return None if vault is None or vault.sync is None else vault.sync.interval

    async def close(self) -> None:
        """Stop the periodic runs (a run in progress finishes its current request)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
