"""Routes that do more than their operation's declaration says (routes_ops.py serves the
rest): the graph neighbourhood of a note and Convex sync."""

from __future__ import annotations

from aiohttp import web

from engram.errors import InvalidInputError, UnavailableError
from engram.server import validate as v
from engram.server.routes import note_rel
from engram.server.state import CONFIG, ENGRAM, SYNC, in_reader
from engram.service import wire

routes = web.RouteTableDef()


@routes.get("/v1/graph/neighbors")
async def neighbors(request: web.Request) -> web.Response:
    """Notes within `depth` links of a note."""
    params = v.query(request)
    rel = await note_rel(request, params.get("path"))
    depth = v.integer(params, "depth", 1, low=1, high=3)
    app = request.app
    found = await in_reader(
        app, app[ENGRAM].neighbors, rel, depth=depth, collection=app[CONFIG].collection
    )
    return web.json_response(wire.to_json(found))


@routes.post("/v1/sync")
async def sync_now(request: web.Request) -> web.Response:
    """Push and pull facts with Convex now (waits for a run already going)."""
    body = await v.json_body(request, allow_empty=True)
    push, pull = v.flag(body, "push", True), v.flag(body, "pull", True)
    if not (push or pull):
        raise InvalidInputError("nothing to do: push and pull are both false")
    app = request.app
    state = await in_reader(app, app[ENGRAM].sync_status, app[CONFIG].collection)
    if not state.configured:
        raise UnavailableError(str(state.reason))
    report = await app[SYNC].run_now(push=push, pull=pull)
    return web.json_response({"report": report.to_dict(), "summary": report.summary()})
