"""One writer at a time: index jobs on a thread of their own, writes on another, taking turns.

Requests that arrive while a job waits are merged into it (a burst of saves from the plugin or
the watcher becomes one job; "everything" absorbs any list of paths). Progress is visible in
`GET /v1/status`. Shutting down stops a running index job at its next batch boundary; the
indexer commits in small transactions, so the index stays consistent.

Writes (facts, note edits, sync's local side) never wait behind long work. A job holds the
writers' turn only for its short SQLite writes: its CPU work (parsing, cutting passages,
embedding, telling languages) runs "away" (index/turns.py) on a thread at the lowest priority
(`lower_priority`), with the turn handed to any write that comes meanwhile, and what it
computed is stored only where it still applies (a write may have indexed the same notes). An
update's scan that a write may have made stale starts again (`Replan`), its parsed notes kept.
So a write waits for one short store of the job, run at the daemon's normal priority, never for
CPU work at nice 19 (which, under load, crawls); and the job's embedding has a llama.cpp
context of its own, so a write's own passages never wait for its batch. A write that comes
while the job stores waits for that batch only: the job hands the turn over at the batch's end
(an update, whose scan may then be stale, stops there and starts again after it: `Preempted`).

The low priority keeps indexing and embedding a vault from taking the cores from searches
(served by the reader threads) and from the user's other work.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from engram.codec import arg, encode
from engram.service import Engram, Replan, giving_way

T = TypeVar("T")
log = logging.getLogger("engram.server")
BACKGROUND_NICE = 19
MAX_STREAK = 4  # a job yielding to writes back to back commits up to 2**4 batches between
SLICE_SECONDS = 0.5  # ...or runs this long, whichever comes first: what a write may wait
# CPU work of a job that ends within this holds on to the turn (a write waits this at most):
# an update starting again after a write stores what it had parsed without letting the next
# write in first, so a stream of writes cannot starve it
GRACE_SECONDS = 0.05


def lower_priority() -> None:
    """Lower the calling thread to nice 19 (Linux only; elsewhere a no-op).

    Linux keeps the nice value per thread, and a new thread inherits its creator's: llama.cpp's
    OpenMP workers, started by this thread at its first decode, run niced too, while the reader
    threads, the write thread and the workers they start keep the daemon's priority. Linux also
    derives a thread's best-effort I/O priority from its nice value (7, the lowest, at 19) when
    none is set, so no separate ionice is needed. Elsewhere `setpriority` takes process ids,
    not thread ids."""
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        nice = os.getpriority(os.PRIO_PROCESS, tid)
        if nice < BACKGROUND_NICE:
            os.setpriority(os.PRIO_PROCESS, tid, BACKGROUND_NICE)
    except OSError as exc:  # a sandbox may forbid it: index at normal priority then
        log.info("could not lower the writer thread's priority: %s", exc)


def yields(done: int, total: int, committed: int, streak: int, seconds: float) -> bool:
    """Does a job with a write waiting stop here? Only once it has committed work since it
    (re)started, never when its phase's work is done, and after twice as much each time writes
    come back to back (each may queue passages of its own) unless that takes longer than a
    slice: the job always finishes, and a write waits about a slice at most."""
    if done >= total or not committed:
        return False
    return committed >= 2 ** min(streak, MAX_STREAK) or seconds >= SLICE_SECONDS


class Cancelled(Exception):
    """Raised from the progress callback to stop an index job at shutdown."""


class Preempted(Exception):
    """Raised from the progress callback to let queued writes run; the job is queued again."""


@dataclass
class Job:
    """One index run: everything (paths None) or some collection-relative paths."""

    id: str
    source: str
    paths: set[str] | None = arg(None, local=True)  # sent as their number (`paths`)
    state: str = "queued"  # queued | running | done | failed | cancelled
    done: int = 0
    total: int = 0
    summary: str | None = None
    error: str | None = None
    changed: list[int] = arg(local=True, factory=list)
    # the indexing half's report once it is done: a job preempted while embedding resumes
    # there (what a write changed meanwhile, the write indexed itself)
    indexed: Any = arg(None, local=True)

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"paths": "path_count"}

    @property
    def path_count(self) -> int | None:
        """How many paths the job indexes (None: everything)."""
        return None if self.paths is None else len(self.paths)


class JobRunner:
    """Queue, merge and run index jobs (on the writer thread) and writes (on the write
    thread), never both at once."""

    def __init__(
        self, engram: Engram, collection: str, on_error: Callable[[str], None] | None = None
    ) -> None:
        self.engram = engram
        self.collection = collection
        self.on_error = on_error
        # the job's own thread, at the daemon's priority: it holds the turn only to store
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-writer")
        # the job's CPU work, away from the turn, at nice 19
        self.compute = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="engram-index", initializer=lower_priority
        )
        # a burst of saves must not rebuild a large vault's graph-index.json for each one
        engram.graph_files.defer = True
        self.pending: Job | None = None
        self.current: Job | None = None
        self.last: Job | None = None
        # writes run here, one at a time and never beside a job (they take turns on `_turn`)
        self.urgent = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-write")
        self._turn = asyncio.Lock()  # first come, first served: a preempted job queues again
        self._waiting = 0  # writes waiting for their turn (read by the job between batches)
        self._streak = 0  # times in a row the job yielded to a write already waiting
        self._writes = 0  # writes that have had their turn (a job away sees if one ran)
        self._loop_ref: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin running jobs on this event loop."""
        self._loop_ref = asyncio.get_running_loop()
        self._task = self._loop_ref.create_task(self._loop(), name="engram-jobs")

    def submit(self, paths: Iterable[str] | None, source: str) -> Job:
        """Queue an index job (None: everything), merged into one already waiting."""
        job = self.pending
        if job is None:
            job = Job(id=uuid.uuid4().hex[:12], source=source)
            job.paths = None if paths is None else set(paths)
            self.pending = job
            self._wake.set()
        else:
            new = None if paths is None else set(paths)
            if new is None or new:
                job.indexed = None  # new paths to look at: index again
            if job.paths is not None:
                job.paths = None if new is None else job.paths | new
        return job

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a write ahead of the rest of any running index job (which yields at its next
        batch), on the write thread at the daemon's own priority: a person's write is
        interactive, not background work. A caller that goes away before it starts cancels it."""
        self._waiting += 1
        try:
            await self._turn.acquire()
        finally:
            self._waiting -= 1
        self._writes += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self.urgent, functools.partial(fn, *args, **kwargs))
        finally:
            self._turn.release()
            # what the write left to embed (Engram's generated notes, the passages of a very
            # long note past what a write embeds itself) is embedded by a job after it
            self.submit((), "write")

    @property
    def busy(self) -> bool:
        """A job is running or waiting."""
        return self.current is not None or self.pending is not None

    def queued_paths(self) -> int:
        """Paths waiting in the queued job (0 when it is a full re-index)."""
        return len(self.pending.paths) if self.pending and self.pending.paths else 0

    def snapshot(self) -> dict[str, Any]:
        """Indexing progress for `GET /v1/status`."""
        job = self.current or self.pending
        return {
            "state": "indexing" if job is not None else "idle",
            "done": job.done if job else 0,
            "total": job.total if job else 0,
            "job": encode(job),
            "lastJob": encode(self.last),
        }

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._closing:
            try:  # until a job comes, or a deferred graph-index.json rebuild is due
                await asyncio.wait_for(self._wake.wait(), self.engram.graph_files.due())
            except TimeoutError:
                async with self._turn:
                    await loop.run_in_executor(self.writer, self._flush_graph_files)
                continue
            self._wake.clear()
            while self.pending is not None and not self._closing:
                async with self._turn:
                    if self.pending is None or self._closing:
                        break
                    job, self.pending = self.pending, None
                    await self._run(job)

    async def _run(self, job: Job) -> None:
        job.state = "running"
        self.current = job
        loop = asyncio.get_running_loop()
        try:
            report = await loop.run_in_executor(self.writer, self._update, job)
            job.state = "done"
            job.summary = report.summary()
            job.changed = list(report.changed_ids)
            if report.warnings:
                log.info("index job %s: %d warnings", job.id, len(report.warnings))
        except (Preempted, Replan):  # the writes queued behind it run first, then it starts again
            self._requeue(job)
            return
        except Cancelled:
            job.state = "cancelled"
        except Exception as exc:
            if self._closing:  # shutdown stopped the parsing workers under the job
                job.state = "cancelled"
                return
            job.state = "failed"
            job.error = f"{type(exc).__name__}: {exc}"
            log.exception("index job %s failed", job.id)
            if self.on_error is not None:
                self.on_error(f"indexing failed: {job.error}")
        finally:
            self.current = None
        self.last = job

    def _requeue(self, job: Job) -> None:
        """Queue a preempted job again, taking in what was submitted meanwhile."""
        job.state = "queued"
        waiting, self.pending = self.pending, job
        if waiting is not None:
            if waiting.paths is None or waiting.paths:
                job.indexed = None
            job.paths = (
                None if job.paths is None or waiting.paths is None else job.paths | waiting.paths
            )

    def _flush_graph_files(self) -> None:
        """On the writer thread: the graph index files whose deferred rebuild is due."""
        try:
            self.engram.graph_files.flush_due()
        except OSError as exc:  # a read-only vault: the index itself is fine
            log.warning("graph-index.json not written: %s", exc)
        except Exception:  # the job loop must go on: the next update retries the file
            log.exception("graph-index.json not rebuilt")

    def _update(self, job: Job) -> Any:
        """On the writer thread: an incremental update of everything or of the changed paths,
        then embedding; stopped at a batch boundary when a write waits (`Preempted`)."""
        calls = committed = 0
        started = time.monotonic()

        def progress(done: int, total: int, phase: str = "indexing") -> None:
            nonlocal calls, committed
            if self._closing:
                raise Cancelled
            job.done, job.total = done, total
            calls += 1
            if phase == "languages" and done >= total:
                # the notes the writes just added, identified in one go: housekeeping, not
                # progress on the job's own work (counted, a stream of writes starved it)
                return
            if phase != "indexing" or calls > 1:  # the indexer's first call follows no commit
                committed += 1
            if not self._waiting:
                self._streak = 0  # writes are not coming back to back
            elif phase != "indexing":  # passages, vectors, languages: checked before stored
                self._hand_over()
            elif yields(done, total, committed, self._streak, time.monotonic() - started):
                self._streak += 1  # an update's scan would be stale: it starts again
                raise Preempted

        with giving_way(self._away):
            if job.indexed is None:
                if job.paths is None:
                    job.indexed = self.engram.update([self.collection], progress=progress)
                else:
                    job.indexed = self.engram.update_changed(self.collection, job.paths, progress)
            self.engram.embed_if_available(
                [self.collection], lambda phase, done, total: progress(done, total, phase)
            )
        return job.indexed

    def _away(self, fn: Callable[[], T]) -> tuple[T, bool]:
        """On the job thread, holding the turn, with no transaction open: run `fn` on the
        low-priority thread, letting writes take the turn meanwhile unless it ends within
        GRACE_SECONDS; (its result, whether a write ran meanwhile)."""
        future = self.compute.submit(fn)
        try:
            return future.result(timeout=GRACE_SECONDS), False
        except TimeoutError:
            pass
        before = self._writes
        self._release()
        try:
            future.exception()  # wait for it, whatever the outcome
        finally:
            self._take_back()
        return future.result(), self._writes != before

    def _hand_over(self) -> None:
        """On the job thread, between batches: let the writes waiting run, then go on."""
        self._release()
        self._take_back()

    def _release(self) -> None:
        assert self._loop_ref is not None
        self._loop_ref.call_soon_threadsafe(self._turn.release)

    def _take_back(self) -> None:
        """Wait for the turn again (after the writes already waiting for it)."""
        loop = self._loop_ref
        assert loop is not None
        back = asyncio.run_coroutine_threadsafe(self._turn.acquire(), loop)
        while True:  # held again before anything else: `_loop` releases it at the end
            try:
                back.result(timeout=1.0)
                break
            except TimeoutError:
                if loop.is_closed():
                    raise Cancelled from None
        if self._closing:
            raise Cancelled

    async def close(self) -> None:
        """Stop: the running job ends at its next batch, queued ones are dropped."""
        self._closing = True
        self._wake.set()
        self.engram.stop_parsing()  # a job waiting on a parse fails now, not at its deadline
        if self.pending is not None:
            self.pending.state = "cancelled"
            self.pending = None
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        loop = asyncio.get_running_loop()
        for pool in (self.writer, self.compute, self.urgent):
            await loop.run_in_executor(None, functools.partial(pool.shutdown, wait=True))
