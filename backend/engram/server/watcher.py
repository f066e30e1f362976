"""Watch the vault (watchfiles) and index changed notes once each has been quiet ~2 s.

The debounce is per file: a note saved every second while typing is indexed once the typing
stops, while another note changed meanwhile is not held back by it. Dot-folders (the config
folder, `.trash`, `.git`) are ignored, as the indexer ignores them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("engram.server")
TICK_SECONDS = 0.25
IGNORED_DIRS = frozenset({"node_modules", "__pycache__"})


class Debouncer:
    """Per-key quiet periods: a key is due once `delay` seconds passed since its last touch."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._last: dict[str, float] = {}

    def touch(self, key: str, now: float) -> None:
        """Record activity on a key."""
        self._last[key] = now

    def due(self, now: float) -> list[str]:
        """Keys quiet for `delay` seconds, removed from the waiting set, sorted."""
        ready = sorted(k for k, t in self._last.items() if now - t >= self.delay)
        for key in ready:
            del self._last[key]
        return ready

    def __len__(self) -> int:
        return len(self._last)


def relevant(root: Path, path: str, config_dir: str) -> str | None:
    """The vault-relative POSIX path of a changed file, or None when it should be ignored."""
    try:
        rel = Path(path).relative_to(root)
    except ValueError:
        return None
    parts = rel.parts
    if not parts:
        return None
    for part in parts:
        if part.startswith(".") or part == config_dir or part in IGNORED_DIRS:
            return None
    if parts[-1].endswith(("~", ".tmp", ".swp")):
        return None
    return rel.as_posix()


class Watcher:
    """The vault watcher: feeds quiet paths to `submit` (the job runner)."""

    def __init__(
        self,
        root: Path,
        config_dir: str,
        debounce: float,
        submit: Callable[[list[str]], object],
    ) -> None:
        self.root = root.resolve()
        self.config_dir = config_dir
        self.debouncer = Debouncer(debounce)
        self.submit = submit
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.error: str | None = None

    @property
    def queue(self) -> int:
        """Changed paths waiting for their quiet period."""
        return len(self.debouncer)

    def start(self) -> None:
        """Start watching and flushing on this event loop."""
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._watch(), name="engram-watch"),
            loop.create_task(self._flush(), name="engram-watch-flush"),
        ]

    async def _watch(self) -> None:
        from watchfiles import awatch

        root = str(self.root)
        try:
            async for changes in awatch(
                root,
                watch_filter=lambda _c, p: relevant(self.root, p, self.config_dir) is not None,
                debounce=400,
                stop_event=self._stop,
                recursive=True,
            ):
                now = asyncio.get_running_loop().time()
                for _change, path in changes:
                    rel = relevant(self.root, os.path.normpath(path), self.config_dir)
                    if rel is not None:
                        self.debouncer.touch(rel, now)
        except (OSError, RuntimeError) as exc:  # the folder vanished, inotify limits...
            self.error = f"watcher stopped: {exc}"
            log.warning("%s", self.error)

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            await asyncio.sleep(TICK_SECONDS)
            due = self.debouncer.due(loop.time())
            if due:
                self.submit(due)

    async def close(self) -> None:
        """Stop watching."""
        self._stop.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
