"""The daemon writes last week's reflection once that week has ended (checked hourly)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from engram.errors import EngramError
from engram.server.state import CONFIG, ENGRAM, JOBS

log = logging.getLogger(__name__)
CHECK_SECONDS = 3600.0


async def reflect_weekly(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: a task that writes the last ended week's reflection when it is missing."""
    task = asyncio.create_task(_loop(app))
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _loop(app: web.Application) -> None:
    engram, name = app[ENGRAM], app[CONFIG].collection
    while True:
        if engram.settings.vault(name) is not None:  # only a vault has a ledger
            try:
                done = await app[JOBS].write(engram.reflections.due, name)
            except (EngramError, OSError) as exc:
                log.warning("weekly reflection not written: %s", exc)
            else:
                if done is not None:
                    log.info("wrote %s", done.path)
        await asyncio.sleep(CHECK_SECONDS)
