"""Reading and parsing files, in this process or, for big batches, in worker processes.

Parsing is the CPU-bound part of indexing; SQLite writes stay in the main process (one
writer). Results come back in input order with a bounded number of batches in flight, so
memory stays flat on huge vaults.
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

from engram.vault.fsio import read_note
from engram.vault.parse import ParsedNote, parse_note

PARALLEL_MIN_FILES = 400
BATCH_FILES = 64


@dataclass(frozen=True)
class Loaded:
    """A file read and parsed, or the reason it was skipped."""

    rel: str
    sha256: str = ""
    text: str = ""
    parsed: ParsedNote | None = None
    warnings: tuple[str, ...] = ()
    skipped: str | None = None


def load(path: Path, rel: str, size: int, max_bytes: int) -> Loaded:
    """Read, decode and parse one note; oversize, binary and unreadable files are skipped."""
    if size > max_bytes:
        return Loaded(
            rel,
            skipped=f"skipped: {size:,} bytes is over the {max_bytes:,}-byte "
            "limit (max_file_bytes)",
        )
    try:
        read = read_note(path)
    except ValueError as exc:
        return Loaded(rel, skipped=f"skipped: {exc}")
    except OSError as exc:
        return Loaded(rel, skipped=f"skipped: cannot read ({exc.strerror})")
    parsed = parse_note(read.text, rel)
    warnings = tuple(w for w in (read.warning, *parsed.warnings) if w)
    return Loaded(rel, read.sha256, read.text, parsed, warnings)


def _load_batch(items: list[tuple[str, str, int, int]]) -> list[Loaded]:
    return [load(Path(path), rel, size, max_bytes) for path, rel, size, max_bytes in items]


def load_all(items: list[tuple[Path, str, int]], max_bytes: int) -> Iterator[Loaded]:
    """Load every (path, rel, size) in order, using worker processes when it pays off."""
    workers = min(os.cpu_count() or 1, 4)
    yielded = 0
    if len(items) >= PARALLEL_MIN_FILES and workers >= 2:
        try:
            for loaded in _parallel(items, max_bytes, workers):
                yielded += 1
                yield loaded
            return
        except BrokenProcessPool:
            pass  # workers could not start (e.g. an unguarded __main__): finish in-process
    for path, rel, size in items[yielded:]:
        yield load(path, rel, size, max_bytes)


def _parallel(items: list[tuple[Path, str, int]], max_bytes: int, workers: int) -> Iterator[Loaded]:
    batches = [
        [(str(p), rel, size, max_bytes) for p, rel, size in items[i : i + BATCH_FILES]]
        for i in range(0, len(items), BATCH_FILES)
    ]
    ctx = multiprocessing.get_context("forkserver" if os.name == "posix" else "spawn")
    if os.name == "posix":
        ctx.set_forkserver_preload(["engram.index.loader"])
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: deque[Future[list[Loaded]]] = deque()
        queue = iter(batches)
        try:
            for batch in queue:
                pending.append(pool.submit(_load_batch, batch))
                if len(pending) >= workers * 2:
                    break
            while pending:
                done = pending.popleft().result()
                nxt = next(queue, None)
                if nxt is not None:
                    pending.append(pool.submit(_load_batch, nxt))
                yield from done
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
