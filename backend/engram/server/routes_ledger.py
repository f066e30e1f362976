"""Routes for the raw transcript ledger (docs/http-api.md): append lines, observe a day."""

from __future__ import annotations

from aiohttp import web

from engram.errors import InvalidInputError
from engram.server import validate as v
from engram.server.state import CONFIG, ENGRAM, JOBS, in_reader
from engram.service.ledger import MAX_LINES

routes = web.RouteTableDef()


@routes.post("/v1/ledger/raw")
async def append_raw(request: web.Request) -> web.Response:
    """Append lines to an agent's raw ledger of the day (all or none)."""
    body = await v.json_body(request)
    agent = v.text(body, "agent", required=True, max_len=64)
    lines = body.get("lines")
    if not isinstance(lines, list) or not lines or len(lines) > MAX_LINES:
        raise InvalidInputError(f"'lines' must be a list of 1 to {MAX_LINES} JSON objects")
    app = request.app
    # appends take the file's lock and never rewrite a line: no need to queue behind the writer
    result = await in_reader(
        app,
        app[ENGRAM].ledger_append,
        agent,
        list(enumerate(lines, 1)),
        app[CONFIG].collection,
    )
    return web.json_response(result.to_dict(), status=201)


@routes.post("/v1/ledger/observe")
async def observe(request: web.Request) -> web.Response:
    """Score a day's raw lines (one agent's or all) into observation lines."""
    body = await v.json_body(request, allow_empty=True)
    agent = v.text(body, "agent", max_len=64) or None
    day = v.text(body, "day", max_len=100) or None
    app = request.app
    result = await app[JOBS].write(app[ENGRAM].ledger_observe, agent, day, app[CONFIG].collection)
    return web.json_response(result.to_dict())


@routes.post("/v1/reflect")
async def reflect(request: web.Request) -> web.Response:
    """Regenerate a week's reflection (default: the last week that ended)."""
    body = await v.json_body(request, allow_empty=True)
    week = v.text(body, "week", max_len=100) or None
    app = request.app
    result = await app[JOBS].write(app[ENGRAM].reflect, week, app[CONFIG].collection)
    return web.json_response(result.to_dict())
