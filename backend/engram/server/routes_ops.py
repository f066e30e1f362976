"""The routes of every declared operation (service/operations.py), made from its declaration:
the request is decoded and checked by the codec against the operation's request type (path
parameters, the query string or the JSON body), the facade method runs where its effect says
(writes on the writer, reads that may run a model on the model threads, other reads and
writes that take their own lock on the reader threads) for the vault this daemon serves, and
the result is encoded by the codec, under the reply key the operation names. A write answers
201 when it makes something (not for a dry run)."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from engram import codec
from engram.errors import InvalidInputError, UnavailableError
from engram.server import validate as v
from engram.server.state import CONFIG, ENGRAM, JOBS, SYNC, in_model_reader, in_reader
from engram.service.operations import OPERATIONS, Operation, by_name

routes = web.RouteTableDef()


async def request_of(op: Operation, request: web.Request) -> Any:
    """The operation's request from an HTTP request; InvalidInputError names a bad field."""
    assert op.request is not None
    if request.method in ("GET", "DELETE"):
        data: dict[str, Any] = v.query(request)
        for f in codec.fields_of(op.request):  # a list is its parameter repeated
            if f.wire in data and codec.is_list(f.hint):
                data[f.wire] = request.query.getall(f.wire)
    else:
        data = await v.json_body(request, allow_empty=True)
    for name, value in request.match_info.items():
        if name in data:
            raise InvalidInputError(f"{name!r} is given by the path; leave it out of the body")
        data[name] = value
    if request.method in ("GET", "DELETE"):
        return codec.from_query(op.request, data)
    return codec.decode(op.request, data)


async def call_args(op: Operation, req: Any, app: web.Application) -> dict[str, Any]:
    """The facade call's keyword arguments: every field, notes checked to stay inside the
    served vault, and that vault."""
    args = {f.name: getattr(req, f.name) for f in dataclasses.fields(req)}
    engram, vault = app[ENGRAM], app[CONFIG].collection
    assert op.request is not None
    for f in codec.fields_of(op.request):
        if f.meta.get("note") and args[f.name] is not None:
            args[f.name] = await in_reader(app, engram.note_path, vault, args[f.name])
    if op.vault:
        args[op.vault] = vault
    return args


def handler(op: Operation) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The route of one declared operation."""

    async def handle(request: web.Request) -> web.Response:
        app = request.app
        req = await request_of(op, request)
        fn = getattr(app[ENGRAM], op.name)
        args = await call_args(op, req, app)
        if op.effect == "write" and not op.locked:
            result = await app[JOBS].write(fn, **args)
        else:
            result = await (in_model_reader if op.model else in_reader)(app, fn, **args)
        data = codec.encode(result)
        status = 201 if op.created and not getattr(result, "dry_run", False) else 200
        return web.json_response({op.reply: data} if op.reply else data, status=status)

    handle.__doc__ = (op.request.__doc__ or "") if op.request else ""
    return handle


async def sync_now(request: web.Request) -> web.Response:
    """Convex sync: the daemon's sync loop does the run (a run already going is waited for)."""
    app, op = request.app, by_name()["sync_now"]
    req = await request_of(op, request)
    if not (req.push or req.pull):
        raise InvalidInputError("nothing to do: push and pull are both false")
    state = await in_reader(app, app[ENGRAM].sync_status, app[CONFIG].collection)
    if not state.configured:
        raise UnavailableError(str(state.reason))
    report = await app[SYNC].run_now(push=req.push, pull=req.pull)
    return web.json_response({op.reply: codec.encode(report)})


# Declared operations whose route does more than call the facade.
OWN_HANDLER = {"sync_now": sync_now}

for _op in OPERATIONS:
    if _op.request is not None and _op.route is not None:
        _method, _path = _op.route.split(" ", 1)
        routes.route(_method, _path)(OWN_HANDLER.get(_op.name) or handler(_op))
