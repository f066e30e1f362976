"""The aiohttp application: `create_app` wires state, middlewares, routes and background work.

`run_app`-style serving (socket, signals, discovery files) lives in `engram.server.run`, the
entry point `engram serve` calls; tests build the app here and drive it with aiohttp_client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from engram.server import mcp, routes, routes_ops
from engram.server.connections import track
from engram.server.jobs import JobRunner
from engram.server.middleware import middlewares
from engram.server.reflect_task import reflect_weekly
from engram.server.state import (
    CONFIG,
    ENGRAM,
    JOBS,
    MODEL_READER,
    READER,
    RUNTIME,
    SYNC,
    WATCHER,
    Runtime,
    ServerConfig,
)
from engram.server.sync_task import SyncLoop
from engram.server.watcher import Watcher
from engram.service import Engram


def create_app(
    engram: Engram, config: ServerConfig, runtime: Runtime, mcp_factory: mcp.Factory | None = None
) -> web.Application:
    """The API for one vault collection of `engram`, authenticated by `runtime.token`; with
    `mcp_factory` (mcp_server.http.streamable_http), MCP at /mcp too."""
    # outermost: a connection counts as busy from its first middleware until its handler returns
    app = web.Application(middlewares=[track, *middlewares()], client_max_size=config.max_body)
    app[ENGRAM] = engram
    app[CONFIG] = config
    app[RUNTIME] = runtime
    app[READER] = ThreadPoolExecutor(config.readers, thread_name_prefix="engram-read")
    app[MODEL_READER] = ThreadPoolExecutor(config.model_readers, thread_name_prefix="engram-model")
    jobs = JobRunner(engram, config.collection, on_error=runtime.record_error)
    app[JOBS] = jobs
    app[WATCHER] = (
        Watcher(
            config.vault,
            config.config_dir,
            config.debounce,
            lambda paths: jobs.submit(paths, "watcher"),
        )
        if config.watch
        else None
    )
    app[SYNC] = SyncLoop(engram, config.collection, jobs)
    app.cleanup_ctx.append(_readers)
    app.cleanup_ctx.append(_jobs)
    app.cleanup_ctx.append(_watcher)
    app.cleanup_ctx.append(_sync)
    app.cleanup_ctx.append(reflect_weekly)
    app.add_routes(routes.routes)
    app.add_routes(routes_ops.routes)
    if mcp_factory is not None:
        mcp.mount(app, mcp_factory)
    return app


async def _readers(app: web.Application) -> AsyncIterator[None]:
    _ = app[ENGRAM].db  # open (and migrate) the index before any request races to do it
    app[ENGRAM].memory.heal()  # what crashed fact writes left, now: reader threads never write
    yield
    for pool in (app[READER], app[MODEL_READER]):
        pool.shutdown(wait=True, cancel_futures=True)


async def _jobs(app: web.Application) -> AsyncIterator[None]:
    jobs = app[JOBS]
    app[ENGRAM].isolate_parsing()  # a hostile note is cut off by a deadline, not the writer
    app[ENGRAM].defer_generated_embedding()  # the job queued after each write embeds them
    jobs.start()
    if app[CONFIG].index_on_start:
        jobs.submit(None, "startup")
    yield
    await jobs.close()


async def _sync(app: web.Application) -> AsyncIterator[None]:
    if app[CONFIG].sync:
        app[SYNC].start()
    yield
    await app[SYNC].close()


async def _watcher(app: web.Application) -> AsyncIterator[None]:
    watcher = app[WATCHER]
    if watcher is not None:
        watcher.start()
    yield
    if watcher is not None:
        await watcher.close()
