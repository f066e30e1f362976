"""Routes over parts built in their own issues: recall and facts (memory), graph neighbours,
Convex sync. Input is validated here; each route then calls one facade method, and answers
501 (or 503 for sync) until that method exists, so wiring a part in is adding the method.

Facade methods these routes call (keyword names as below):
  recall(q, n=)                      -> results (objects with to_dict(), or .results/.notices)
  recent_facts(limit=, fact_type=)   -> facts
  add_fact(text=, fact_type=, importance=, confidence=, tags=, entities=, title=) -> fact
  get_fact(fact_id) / archive_fact(fact_id) -> fact
  update_fact(fact_id, changes: dict with the snake_case keys of FIELDS) -> fact
  fact_from_note(collection, path, selection=) -> fact
  neighbors(collection, path, depth=) -> {"nodes": [...], "edges": [...]} (or to_dict())
  sync_status() -> {"configured", "state", "pending", "lastSync", "reason"?};  sync_now() -> dict
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from aiohttp import web

from engram.errors import InvalidInputError, UnavailableError
from engram.server import validate as v
from engram.server.middleware import ApiError
from engram.server.routes import note_rel
from engram.server.state import CONFIG, ENGRAM, JOBS, in_reader

routes = web.RouteTableDef()
FACT_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
# JSON name -> (facade keyword, type check)
FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "text": ("text", lambda x: isinstance(x, str) and bool(x.strip()) and len(x) <= 100_000),
    "title": ("title", lambda x: isinstance(x, str) and len(x) <= 500),
    "type": ("fact_type", lambda x: isinstance(x, str) and 0 < len(x) <= 64),
    "importance": ("importance", lambda x: _unit(x)),
    "confidence": ("confidence", lambda x: _unit(x)),
    "tags": ("tags", lambda x: _str_list(x)),
    "entities": ("entities", lambda x: _str_list(x)),
    "lifecycleState": ("lifecycle_state", lambda x: isinstance(x, str) and 0 < len(x) <= 32),
    "supersededBy": ("superseded_by", lambda x: x is None or isinstance(x, str)),
    "contradictsWith": ("contradicts_with", lambda x: _str_list(x)),
}
NEW_FACT = ("text", "title", "type", "importance", "confidence", "tags", "entities")


def _unit(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and 0 <= x <= 1


def _str_list(x: Any) -> bool:
    return isinstance(x, list) and len(x) <= 200 and all(isinstance(s, str) for s in x)


def _facade(request: web.Request, name: str, what: str) -> Callable[..., Any]:
    fn = getattr(request.app[ENGRAM], name, None)
    if fn is None:
        raise ApiError(501, "not_implemented", f"{what} is not available in this version yet")
    return fn


def _fields(body: dict[str, Any], allowed: tuple[str, ...]) -> dict[str, Any]:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise InvalidInputError(f"unknown field {unknown[0]!r}; allowed: {', '.join(allowed)}")
    out = {}
    for key, value in body.items():
        name, ok = FIELDS[key]
        if not ok(value):
            raise InvalidInputError(f"{key!r} has the wrong type or is out of range")
        if isinstance(value, str):
            v.clean(value, key)
        elif isinstance(value, list):
            for item in value:
                v.clean(item, key)
        out[name] = value
    return out


def _fact_id(request: web.Request) -> str:
    fact_id = request.match_info["id"]
    if not FACT_ID.fullmatch(fact_id):
        raise InvalidInputError("a fact id is letters, digits, '-', '_' or '.'")
    return fact_id


def jsonable(value: Any) -> Any:
    """Facade values as JSON: objects with to_dict(), lists of them, or plain data."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [jsonable(x) for x in value]
    return value


@routes.post("/v1/recall")
async def recall(request: web.Request) -> web.Response:
    """Facts and notes ranked by relevance × importance × recency."""
    body = await v.json_body(request)
    q = v.text(body, "q", required=True)
    n = v.integer(body, "n", 10, low=1, high=200)
    fn = _facade(request, "recall", "recall")
    found = await in_reader(request.app, fn, q, n=n)
    results = getattr(found, "results", found)
    return web.json_response(
        {"results": jsonable(results), "notices": list(getattr(found, "notices", ()))}
    )


@routes.get("/v1/facts")
async def list_facts(request: web.Request) -> web.Response:
    """Recent facts, newest first (optionally one type)."""
    params = dict(request.query)
    limit = v.integer(params, "limit", 20, low=1, high=500)
    sort = v.text(params, "sort", default="recent", max_len=16)
    if sort != "recent":
        raise InvalidInputError('sort must be "recent"')
    fact_type = v.text(params, "type", max_len=64) or None
    fn = _facade(request, "recent_facts", "listing facts")
    facts = await in_reader(request.app, fn, limit=limit, fact_type=fact_type)
    return web.json_response({"facts": jsonable(facts)})


@routes.post("/v1/facts")
async def create_fact(request: web.Request) -> web.Response:
    """Store a new fact as a note."""
    fields = _fields(await v.json_body(request), NEW_FACT)
    if "text" not in fields:
        raise InvalidInputError("'text' is required")
    fn = _facade(request, "add_fact", "storing facts")
    fact = await request.app[JOBS].write(fn, **fields)
    return web.json_response({"fact": jsonable(fact)}, status=201)


@routes.get("/v1/facts/{id}")
async def get_fact(request: web.Request) -> web.Response:
    """One fact."""
    fact_id = _fact_id(request)
    fn = _facade(request, "get_fact", "reading facts")
    return web.json_response({"fact": jsonable(await in_reader(request.app, fn, fact_id))})


@routes.patch("/v1/facts/{id}")
async def update_fact(request: web.Request) -> web.Response:
    """Change some fields of a fact (its note is rewritten safely)."""
    fact_id = _fact_id(request)
    changes = _fields(await v.json_body(request), tuple(FIELDS))
    if not changes:
        raise InvalidInputError("nothing to change")
    fn = _facade(request, "update_fact", "editing facts")
    fact = await request.app[JOBS].write(fn, fact_id, changes)
    return web.json_response({"fact": jsonable(fact)})


@routes.delete("/v1/facts/{id}")
async def archive_fact(request: web.Request) -> web.Response:
    """Archive a fact: its note stays, lifecycleState becomes archived."""
    fact_id = _fact_id(request)
    fn = _facade(request, "archive_fact", "archiving facts")
    return web.json_response({"fact": jsonable(await request.app[JOBS].write(fn, fact_id))})


@routes.post("/v1/facts/from-note")
async def fact_from_note(request: web.Request) -> web.Response:
    """Store a note, or a selection in it, as a fact."""
    body = await v.json_body(request)
    rel = await note_rel(request, v.text(body, "path", required=True, max_len=4096))
    selection = v.text(body, "selection", max_len=100_000)
    fn = _facade(request, "fact_from_note", "storing facts")
    collection = request.app[CONFIG].collection
    fact = await request.app[JOBS].write(fn, collection, rel, selection=selection)
    return web.json_response({"fact": jsonable(fact)}, status=201)


@routes.get("/v1/graph/neighbors")
async def neighbors(request: web.Request) -> web.Response:
    """Notes within `depth` links of a note."""
    params = dict(request.query)
    rel = await note_rel(request, params.get("path"))
    depth = v.integer(params, "depth", 1, low=1, high=3)
    fn = _facade(request, "neighbors", "the link graph")
    found = await in_reader(request.app, fn, request.app[CONFIG].collection, rel, depth=depth)
    return web.json_response(jsonable(found))


@routes.post("/v1/sync")
async def sync_now(request: web.Request) -> web.Response:
    """Push and pull facts with Convex now."""
    await v.json_body(request, allow_empty=True)
    engram = request.app[ENGRAM]
    status = getattr(engram, "sync_status", None)
    state = await in_reader(request.app, status) if status is not None else {}
    if not state.get("configured") or not hasattr(engram, "sync_now"):
        raise UnavailableError(
            state.get("reason")
            or "sync is not configured: set the Convex deployment URL (see docs/convex.md)"
        )
    return web.json_response(jsonable(await request.app[JOBS].write(engram.sync_now)))
