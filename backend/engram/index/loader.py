"""Reading and parsing files, in this process or, for big batches, in worker processes.

Parsing is the CPU-bound part of indexing; SQLite writes stay in the main process (one
writer). Workers hand back the rows to write (a NoteRecord of plain tuples, cheap to pickle),
not the parse tree. Results come back in input order with a bounded number of batches in
flight, so memory stays flat on huge vaults.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from engram.store.documents import NoteRecord

PARALLEL_MIN_FILES = 400
BATCH_FILES = 64


@dataclass(frozen=True)
class Loaded:
    """A file read and parsed into the rows to store, or the reason it was skipped."""

    rel: str
    sha256: str = ""
    record: NoteRecord | None = None
    warnings: tuple[str, ...] = ()
    skipped: str | None = None


# what to load: (file system path, collection-relative path, size, mtime_ns)
Item = tuple[str, str, int, int]


def load(collection: str, item: Item, max_bytes: int) -> Loaded:
    """Read, decode and parse one note; oversize, binary and unreadable files are skipped."""
    from engram.index.record import note_record  # parsing libraries load only when parsing
    from engram.vault.fsio import read_note
    from engram.vault.parse import parse_note

    path, rel, size, mtime_ns = item
    if size > max_bytes:
        return Loaded(
            rel,
            skipped=f"skipped: {size:,} bytes is over the {max_bytes:,}-byte "
            "limit (max_file_bytes)",
        )
    try:
        read = read_note(Path(path))
    except ValueError as exc:
        return Loaded(rel, skipped=f"skipped: {exc}")
    except OSError as exc:
        return Loaded(rel, skipped=f"skipped: cannot read ({exc.strerror})")
    parsed = parse_note(read.text, rel)
    warnings = tuple(w for w in (read.warning, *parsed.warnings) if w)
    record = note_record(collection, rel, mtime_ns, size, read.sha256, read.text, parsed, warnings)
    return Loaded(rel, read.sha256, record, warnings)


def _load_batch(collection: str, items: list[Item], max_bytes: int) -> list[Loaded]:
    return [load(collection, item, max_bytes) for item in items]


def load_all(collection: str, items: list[Item], max_bytes: int) -> Iterator[Loaded]:
    """Load every item in order, using worker processes when it pays off."""
    workers = min(os.cpu_count() or 1, 4)
    yielded = 0
    if len(items) >= PARALLEL_MIN_FILES and workers >= 2:
        try:
            for loaded in _parallel(collection, items, max_bytes, workers):
                yielded += 1
                yield loaded
            return
        except BrokenProcessPool:
            pass  # workers could not start (e.g. an unguarded __main__): finish in-process
    for item in items[yielded:]:
        yield load(collection, item, max_bytes)


def _parallel(collection: str, items: list[Item], max_bytes: int, workers: int) -> Iterator[Loaded]:
    batches = [items[i : i + BATCH_FILES] for i in range(0, len(items), BATCH_FILES)]
    ctx = multiprocessing.get_context("forkserver" if os.name == "posix" else "spawn")
    if os.name == "posix":
        ctx.set_forkserver_preload(["engram.index.record"])
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: deque[Future[list[Loaded]]] = deque()
        queue = iter(batches)
        try:
            for batch in queue:
                pending.append(pool.submit(_load_batch, collection, batch, max_bytes))
                if len(pending) >= workers * 2:
                    break
            while pending:
                done = pending.popleft().result()
                nxt = next(queue, None)
                if nxt is not None:
                    pending.append(pool.submit(_load_batch, collection, nxt, max_bytes))
                yield from done
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
