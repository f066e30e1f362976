"""Where a long index run lets writes go first: its CPU work is done "away" from the writers'
turn, outside any transaction, and only the short SQLite writes that follow hold it.

The daemon's index job installs a hook on its thread (`giving_way`): `away(fn)` then runs `fn`
(parsing, cutting passages, embedding, telling languages) on a thread at nice 19, hands the
turn to any write that comes meanwhile, and takes it back before it returns, so a write waits
for one short write of the job at most, never for its CPU work nor for CPU work at nice 19.
Everywhere else (the CLI, a write's own indexing) `away(fn)` is `fn()`.

What `fn` computed may be stale when it returns, since a write may have run: callers store it
only where it still applies (a compare-and-set on what it was computed from), or, where the
plan is too wide to check (an update's scan), raise `Replan`; what was parsed is kept
(loader.ParsePool.keep), so the job's next attempt stores it without parsing again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol, TypeVar

T = TypeVar("T")


class Hook(Protocol):
    """Run `fn` without the writers' turn: (its result, whether a write ran meanwhile)."""

    def __call__(self, fn: Callable[[], T]) -> tuple[T, bool]: ...


class Replan(Exception):
    """A write ran while an update looked away: its scan may be stale, so the update starts
    again (what it parsed meanwhile is kept for it)."""


_local = threading.local()


def away(fn: Callable[[], T]) -> tuple[T, bool]:
    """`fn()`, with writes let in meanwhile on a thread that gives way (call it with no
    transaction open; `fn` opens none): (its result, whether a write ran meanwhile)."""
    hook: Hook | None = getattr(_local, "hook", None)
    if hook is None:
        return fn(), False
    return hook(fn)


def in_background() -> bool:
    """Whether this thread runs the daemon's index job (one that gives way to writes)."""
    return getattr(_local, "hook", None) is not None


@contextmanager
def giving_way(hook: Hook) -> Iterator[None]:
    """Let writes in through `hook` while this thread runs the body (the daemon's job)."""
    _local.hook = hook
    try:
        yield
    finally:
        _local.hook = None
