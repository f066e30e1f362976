"""Reading and parsing files, in this process or in worker processes under a deadline.

Parsing is the CPU-bound part of indexing; SQLite writes stay in the main process (one
writer). Workers hand back the rows to write (a NoteRecord of plain tuples, cheap to pickle),
not the parse tree. Results come back in input order with a bounded number of batches in
flight, so memory stays flat on huge vaults.

A note is hostile input. The parser's limits bound its work (vault/parse.py); a worker adds a
deadline on top: a batch that runs past it is killed with its worker, its notes are parsed
again one by one, and a note that alone runs past its deadline (or kills its worker) is
indexed as plain text with a warning. Big batches and big files always go to workers; the
daemon sends every note there (`ParsePool(isolate=True)`), so nothing can hold its writer.
Workers die with the process that started them (see `_worker_start`). A `background` pool's
workers run at nice 19 (the daemon's index job); the daemon starts the fork server from a
thread at its own priority (`start_server`), so a write's workers keep that priority.

A PDF is read by native code (PDFium), so it always goes to a worker, alone in its task, with a
deadline of its own (`pdf_deadline`): a crash or a page that never ends costs that PDF (skipped
with a warning), never the update. A canvas is JSON read within the note limits, here or there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engram.store.documents import NoteRecord
from engram.vault.kinds import is_pdf

if TYPE_CHECKING:
    from pebble import ProcessPool

    from engram.vault.parse import ParsedNote
    from engram.vault.pdf import PdfText

PARALLEL_MIN_FILES = 400
BATCH_FILES = 64
INPROCESS_MAX_BYTES = 256 * 1024  # bigger files are parsed in a worker, under a deadline
DEADLINE_SECONDS = 10.0  # a task's deadline: this, plus its size at the slowest rate below
DEADLINE_BYTES_PER_SECOND = 250_000  # ~20x slower than the parser on dense markdown
WORKER_MEMORY_BYTES = 2 * 1024**3  # address space of a worker (RLIMIT_AS), where supported
WAIT_STEP_SECONDS = 0.2  # how often a waiter checks that the pool was not stopped
BACKGROUND_NICE = 19
KEPT_MAX_BYTES = 256 * 1024**2  # parsed notes kept for an update that starts again (turns.py)
PRELOAD = ["engram.index.loader", "engram.index.record"]
PDF_BYTES_PER_SECOND = 1_000_000  # reading and parsing a PDF's objects; its pages have a budget


@dataclass(frozen=True)
class Loaded:
    """A file read and parsed into the rows to store, or the reason it was skipped."""

    rel: str
    sha256: str = ""
    record: NoteRecord | None = None
    warnings: tuple[str, ...] = ()
    skipped: str | None = None
    extract: PdfText | None = None  # a PDF's text, for the cache by file hash


# what to load: (file system path, collection-relative path, size, mtime_ns)
Item = tuple[str, str, int, int]


class ParsingCancelled(Exception):
    """The parse pool was stopped (the daemon is shutting down) while work was waiting."""


def load(collection: str, item: Item, max_bytes: int, plain: str | None = None) -> Loaded:
    """Read, decode and parse one note; oversize, binary and unreadable files are skipped.

    With `plain` (the reason), the note is not parsed: it is indexed as plain text.
    """
    from engram.index.record import canvas_parsed, note_record  # loaded only when parsing
    from engram.vault.fsio import read_note
    from engram.vault.kinds import is_canvas
    from engram.vault.parse import parse_note, plain_text

    path, rel, size, mtime_ns = item
    if is_pdf(rel):
        return load_pdf(collection, item, plain)
    if size > max_bytes:
        return Loaded(
            rel,
            skipped=f"skipped: {size:,} bytes is over the {max_bytes:,}-byte "
            "limit (max_file_bytes)",
        )
    try:
        read = read_note(path, max_bytes)
    except ValueError as exc:
        return Loaded(rel, skipped=f"skipped: {exc}")
    except OSError as exc:
        return Loaded(rel, skipped=f"skipped: cannot read ({exc.strerror})")
    text = read.text
    if is_canvas(rel):  # the index keeps the text the canvas reads as
        from engram.vault.canvas import read_canvas

        canvas = read_canvas(text)
        text = canvas.text
        parsed = canvas_parsed(canvas, rel) if plain is None else plain_text(text, rel, plain)
    else:
        parsed = parse_note(text, rel) if plain is None else plain_text(text, rel, plain)
    warnings = tuple(w for w in (read.warning, *parsed.warnings) if w)
    record = note_record(collection, rel, mtime_ns, size, read.sha256, text, parsed, warnings)
    return Loaded(rel, read.sha256, record, warnings)


def load_pdf(collection: str, item: Item, plain: str | None = None) -> Loaded:
    """Read a PDF and extract its text page by page; one that cannot be read (encrypted, no
    PDF, over the size limit, or stopped: `plain` says why) is skipped with the reason."""
    from engram.index.record import pdf_record
    from engram.vault import pdf
    from engram.vault.fsio import read_bytes

    path, rel, size, mtime_ns = item
    if plain is not None:
        return Loaded(rel, skipped=f"PDF skipped: {plain}")
    if size > pdf.MAX_BYTES:
        return Loaded(
            rel, skipped=f"skipped: {size:,} bytes is over the {pdf.MAX_BYTES:,}-byte PDF limit"
        )
    try:
        data, sha = read_bytes(path, pdf.MAX_BYTES)
    except ValueError as exc:
        return Loaded(rel, skipped=f"skipped: {exc}")
    except OSError as exc:
        return Loaded(rel, skipped=f"skipped: cannot read ({exc.strerror})")
    try:
        text = pdf.extract(data)
    except pdf.PdfError as exc:
        return Loaded(rel, sha, skipped=str(exc))
    record = pdf_record(collection, rel, mtime_ns, size, sha, text)
    return Loaded(rel, sha, record, text.warnings, extract=text)


def pdf_deadline(size: int) -> float:
    """Seconds a worker gets to read a PDF of `size` bytes: its pages' time budget, plus
    reading its objects at the slowest rate above."""
    from engram.vault.pdf import TIME_BUDGET_SECONDS

    return DEADLINE_SECONDS + TIME_BUDGET_SECONDS + size / PDF_BYTES_PER_SECOND


def _load_batch(collection: str, items: list[Item], max_bytes: int) -> list[Loaded]:
    return [load(collection, item, max_bytes) for item in items]


def deadline(size: int) -> float:
    """Seconds a worker gets to read and parse `size` bytes."""
    return DEADLINE_SECONDS + size / DEADLINE_BYTES_PER_SECOND


def load_all(
    collection: str, items: list[Item], max_bytes: int, pool: ParsePool | None = None
) -> Iterator[Loaded]:
    """Load every item in order: in worker processes for big batches, big files, or when
    `pool` isolates all parsing (the daemon); here otherwise."""
    workers = min(os.cpu_count() or 1, 4)
    if len(items) >= PARALLEL_MIN_FILES and workers >= 2:
        with ParsePool(workers, background=pool is not None and pool.background) as many:
            yield from many.load(collection, items, max_bytes)
    elif pool is not None and (pool.isolate or _has_big(items, max_bytes)):
        yield from pool.load(collection, items, max_bytes)
    elif _has_big(items, max_bytes):
        with ParsePool(1) as one:
            yield from one.load(collection, items, max_bytes)
    else:
        for item in items:
            yield load(collection, item, max_bytes)


def _has_big(items: list[Item], max_bytes: int) -> bool:
    """Whether some item must be read in a worker: a big note, or any PDF."""
    return any(INPROCESS_MAX_BYTES < item[2] <= max_bytes or is_pdf(item[1]) for item in items)


def _batches(items: list[Item]) -> list[list[Item]]:
    """Notes in batches of BATCH_FILES, each PDF in a task of its own."""
    out: list[list[Item]] = []
    notes: list[Item] = []
    for item in items:
        if is_pdf(item[1]):
            out.append([item])
            continue
        notes.append(item)
        if len(notes) == BATCH_FILES:
            out.append(notes)
            notes = []
    if notes:
        out.append(notes)
    return out


def _task_deadline(batch: list[Item], max_bytes: int) -> float:
    if len(batch) == 1 and is_pdf(batch[0][1]):
        return pdf_deadline(batch[0][2])
    return deadline(sum(min(item[2], max_bytes) for item in batch))


def parse_text(text: str, rel: str, pool: ParsePool) -> ParsedNote:
    """Parse a note's text: here when it is small, else (or when `pool` isolates all
    parsing) in a worker under a deadline."""
    from engram.vault.parse import parse_note

    if not pool.isolate and len(text) <= INPROCESS_MAX_BYTES:
        return parse_note(text, rel)
    return pool.parse(text, rel)


def start_server() -> None:
    """Start the fork server the workers come from, from the calling thread: they inherit its
    nice value, and a server started by a thread at nice 19 would slow a write's parse."""
    if os.name != "posix":
        return
    import multiprocessing
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)
    forkserver.ensure_running()


class ParsePool:
    """Worker processes that parse notes, each task under a deadline.

    Started on first use, so holding one costs nothing until a note needs it; `close` stops
    the workers at once (work in flight raises ParsingCancelled in its waiter), and the next
    use starts new ones. `background`: the workers run at nice 19.
    """

    def __init__(self, workers: int = 1, isolate: bool = False, background: bool = False) -> None:
        self.workers = workers
        self.isolate = isolate  # parse every note here, however small
        self.background = background
        self._pool: ProcessPool | None = None
        self._generation = 0  # bumped by close: waiters from before it give up
        self._kept: dict[tuple[str, Item], Loaded] = {}

    def keep(self, collection: str, item: Item, loaded: Loaded) -> None:
        """Hold a parsed note for an update that starts again before storing it (a write ran
        meanwhile: turns.Replan), up to KEPT_MAX_BYTES of text."""
        if sum(kept[2] for _, kept in self._kept) + item[2] <= KEPT_MAX_BYTES:
            self._kept[(collection, item)] = loaded

    def take_kept(self, collection: str, items: list[Item]) -> tuple[list[Loaded], list[Item]]:
        """(the kept notes among `items`, same path, time and size; the items still to load).
        The rest kept for this collection is dropped: those files changed again since."""
        kept = {k: v for k, v in self._kept.items() if k[0] == collection}
        self._kept = {k: v for k, v in self._kept.items() if k[0] != collection}
        hits: list[Loaded] = []
        rest: list[Item] = []
        for item in items:
            loaded = kept.get((collection, item))
            if loaded is None:
                rest.append(item)
            else:
                hits.append(loaded)
        return hits, rest

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _get(self) -> ProcessPool:
        if self._pool is None:
            import multiprocessing

            from pebble import ProcessPool

            ctx = multiprocessing.get_context("forkserver" if os.name == "posix" else "spawn")
            if os.name == "posix":
                ctx.set_forkserver_preload(PRELOAD)
            self._pool = ProcessPool(
                self.workers,
                initializer=_worker_start,
                initargs=(os.getpid(), self.background),
                context=ctx,
            )
        return self._pool

    def close(self) -> None:
        """Stop the workers now; pending work is dropped."""
        self._generation += 1
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            pool.join(timeout=10)

    def load(self, collection: str, items: list[Item], max_bytes: int) -> Iterator[Loaded]:
        """`load` for every item, in order, in the workers."""
        generation = self._generation
        pool = self._get()
        batches = _batches(items)

        def submit(batch: list[Item]) -> tuple[list[Item], Future[list[Loaded]]]:
            future = pool.schedule(
                _load_batch,
                (collection, batch, max_bytes),
                timeout=_task_deadline(batch, max_bytes),
            )
            return batch, future

        pending: deque[tuple[list[Item], Future[list[Loaded]]]] = deque()
        queue = iter(batches)
        try:
            for batch in queue:
                pending.append(submit(batch))
                if len(pending) >= self.workers * 2:
                    break
            while pending:
                batch, future = pending.popleft()
                done = self._wait(future, generation)
                nxt = next(queue, None)
                if nxt is not None:
                    pending.append(submit(nxt))
                if done is None:  # past its deadline, or the worker died: one by one
                    done = [
                        self._load_one(collection, item, max_bytes, generation) for item in batch
                    ]
                yield from done
        except BaseException:
            for _, future in pending:
                future.cancel()
            raise

    def _load_one(self, collection: str, item: Item, max_bytes: int, generation: int) -> Loaded:
        limit = _task_deadline([item], max_bytes)
        future = self._get().schedule(load, (collection, item, max_bytes), timeout=limit)
        loaded = self._wait(future, generation)
        if loaded is not None:
            return loaded
        why = f"not parsed within {limit:.1f} s (or crashed its worker)"
        return load(collection, item, max_bytes, plain=why)

    def parse(self, text: str, rel: str) -> ParsedNote:
        """`parse_note` in a worker; the note as plain text if it runs past its deadline."""
        from engram.vault.parse import parse_note, plain_text

        generation = self._generation
        future = self._get().schedule(
            parse_note, (text, rel), timeout=deadline(len(text.encode("utf-8", "replace")))
        )
        parsed = self._wait(future, generation)
        if parsed is None:
            return plain_text(text, rel, "not parsed within its deadline (or crashed its worker)")
        return parsed

    def _wait(self, future: Future[Any], generation: int) -> Any:
        """The task's result; None when it ran past its deadline or its worker died."""
        from pebble import ProcessExpired

        while True:
            if self._generation != generation:  # a stopped pool never settles its futures
                raise ParsingCancelled("parsing stopped")
            try:
                return future.result(timeout=WAIT_STEP_SECONDS)
            except TimeoutError:
                if not future.done():
                    continue  # still running: the pool enforces the task's own deadline
                exc: BaseException = TimeoutError()
            except Exception as caught:
                exc = caught
            break
        if self._generation != generation:
            raise ParsingCancelled("parsing stopped")
        if isinstance(exc, TimeoutError | ProcessExpired | MemoryError | RecursionError):
            return None
        raise exc


def _worker_start(owner: int, background: bool = False) -> None:
    """In each worker, before any task: die with the process that owns the pool.

    Linux kills the worker when its parent exits (PR_SET_PDEATHSIG). A worker's parent is the
    forkserver, which exits when its owner does (end of file on its "alive" pipe), so a
    SIGKILLed `engram update` leaves no worker behind; an idle worker also exits at end of
    file on its task pipe. The address space is capped so a runaway parse fails with
    MemoryError (the note is indexed as plain text) instead of exhausting the machine. A
    background pool's worker lowers its own priority (nice 19).
    """
    if background and hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(max(0, BACKGROUND_NICE - os.nice(0)))
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    try:
        os.kill(owner, 0)  # the owner may have died before prctl took effect
    except ProcessLookupError:
        os._exit(1)
    except PermissionError:
        pass
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > WORKER_MEMORY_BYTES:
            resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, hard))
    except (ImportError, ValueError, OSError):
        pass
