"""Reading `facts:listChangedSince` page by page, within bounds.

A deployment decides when a pull is done (`isDone`), so a buggy or hostile one could keep a
run going for ever: answering `isDone: false` with a cursor that never moves, or with a new
change on every page. A pull therefore ends at the first of: Convex saying it is done, a
cursor it already sent (an error), `pages` pages, or `seconds` seconds. The cursor saved
after each applied page is where the next run resumes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

from engram.printable import printable
from engram.sync.client import ConvexClient, Malformed, Retryable
from engram.sync.remote import Page, parse_page

SLACK = 0.05  # seconds: a timer may fire this much before the deadline it was set for


@dataclass(frozen=True)
class PullLimits:
    """The most one pull reads: `pages` pages, and `seconds` (between pages, and each
    request's waits and retries are cut at the budget)."""

    pages: int = 100
    seconds: float = 60.0


class Pager:
    """Pages of changes after `cursor`, `size` at a time; `stopped` says why it ended before
    Convex said it was done (None when it was)."""

    def __init__(
        self,
        client: ConvexClient,
        cursor: str | None,
        size: int,
        limits: PullLimits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.cursor = cursor
        self.size = size
        self.limits = limits
        self.clock = clock
        self.stopped: str | None = None
        self.read = 0  # pages read

    async def pages(self) -> AsyncGenerator[Page, None]:
        """Each page in order; Malformed for a reply of the wrong shape or a cursor seen
        before in this pull (Convex going round in circles)."""
        seen = {self.cursor or ""}
        deadline = self.clock() + self.limits.seconds
        while True:
            if self.read >= self.limits.pages:
                self.stopped = f"read {self.read} pages, the most one run reads"
                return
            if self.read and self.clock() >= deadline:
                self.stopped = self._out_of_time()
                return
            try:
                value = await self.client.query(
                    "facts:listChangedSince",
                    {"cursor": self.cursor, "limit": self.size},
                    deadline=deadline,
                )
            except Retryable:
                # a request the budget cut short, after pages were read: a stop, not an error
                if self.read and self.clock() >= deadline - SLACK:
                    self.stopped = self._out_of_time()
                    return
                raise
            page = parse_page(value, self.size)
            self.read += 1
            yield page
            if page.is_done:
                return
            if page.next_cursor in seen:
                raise Malformed(
                    "Convex's cursor did not move (isDone false and a cursor already seen"
                    f' in this pull, "{printable(page.next_cursor[:80])}"): the pull stopped'
                )
            seen.add(page.next_cursor)
            self.cursor = page.next_cursor

    def _out_of_time(self) -> str:
        return f"read for {self.limits.seconds:g} s, the most one run reads"
