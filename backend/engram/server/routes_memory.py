"""Routes for memory (recall, facts), the graph and Convex sync. Input is validated here;
each route then calls one facade method on the served vault."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from aiohttp import web

from engram.errors import InvalidInputError, UnavailableError
from engram.server import validate as v
from engram.server.routes import note_rel
from engram.server.state import CONFIG, ENGRAM, JOBS, SYNC, in_model_reader, in_reader
from engram.service import wire

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
    "lifecycleState": ("lifecycle", lambda x: isinstance(x, str) and 0 < len(x) <= 32),
    "scope": ("scope", lambda x: _short(x)),
    "source": ("source", lambda x: _short(x)),
    "createdBy": ("created_by", lambda x: _short(x)),
}
NEW_FACT = (
    "text",
    "title",
    "type",
    "importance",
    "confidence",
    "tags",
    "entities",
    "scope",
    "source",
    "createdBy",
)
PATCH_FACT = (*NEW_FACT[:7], "lifecycleState", "scope")
PROFILES = ("default", "planning", "incident", "handoff")
ALL_STATES = ("active", "dormant", "merged", "archived", "pruned")


def _unit(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and 0 <= x <= 1


def _short(x: Any) -> bool:
    return isinstance(x, str) and 0 < len(x.strip()) <= 128


def _str_list(x: Any) -> bool:
    return isinstance(x, list) and len(x) <= 200 and all(isinstance(s, str) for s in x)


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


@routes.post("/v1/recall")
async def recall(request: web.Request) -> web.Response:
    """Facts and notes ranked by relevance × importance × recency."""
    body = await v.json_body(request)
    q = v.text(body, "q") or ""  # empty: the filters alone, by importance and age
    n = v.integer(body, "n", 10, low=1, high=200)
    app = request.app
    found = await in_model_reader(
        app,
        app[ENGRAM].recall,
        q,
        n=n,
        fact_type=v.text(body, "type", max_len=64) or None,
        tags=v.strings(body, "tags", max_len=200),
        scope=v.text(body, "scope", max_len=200) or None,
        since=v.text(body, "since", max_len=100) or None,
        until=v.text(body, "until", max_len=100) or None,
        tier_name=v.text(body, "tier", max_len=16) or None,  # checked by the facade
        include_notes=v.flag(body, "includeNotes"),
        states=ALL_STATES if v.flag(body, "allStates") else None,
        vault=app[CONFIG].collection,
        agent=v.text(body, "agent", max_len=128) or None,  # counted when named
    )
    return web.json_response({"results": wire.to_json(found), "notices": []})


@routes.post("/v1/memory/context")
async def memory_context(request: web.Request) -> web.Response:
    """Context for an agent: facts by tier, daily notes, hits and neighbours, within a budget."""
    body = await v.json_body(request, allow_empty=True)
    q = v.text(body, "q") or None
    profile = v.text(body, "profile", default="default", max_len=16) or "default"
    if profile not in PROFILES:
        raise InvalidInputError(f"profile must be one of {', '.join(PROFILES)}")
    budget = v.integer(body, "budget", 4000, low=0, high=200_000)
    app = request.app
    found = await in_model_reader(
        app, app[ENGRAM].memory_context, q, profile, budget, app[CONFIG].collection
    )
    return web.json_response(wire.to_json(found))


@routes.post("/v1/memory/deep-search")
async def deep_search(request: web.Request) -> web.Response:
    """Facts and notes by local hybrid recall, fused with Convex's when sync is configured."""
    body = await v.json_body(request)
    q = v.text(body, "q", required=True)
    n = v.integer(body, "n", 10, low=1, high=200)
    app = request.app
    found = await in_model_reader(app, app[ENGRAM].deep_search, q, n, app[CONFIG].collection)
    return web.json_response(wire.to_json(found))


@routes.get("/v1/facts")
async def list_facts(request: web.Request) -> web.Response:
    """Recent facts, newest first (optionally one type)."""
    params = v.query(request)
    limit = v.integer(params, "limit", 20, low=1, high=500)
    sort = v.text(params, "sort", default="recent", max_len=16)
    if sort != "recent":
        raise InvalidInputError('sort must be "recent"')
    fact_type = v.text(params, "type", max_len=64) or None
    app = request.app
    facts = await in_reader(
        app,
        app[ENGRAM].recent_facts,
        limit=limit,
        fact_type=fact_type,
        vault=app[CONFIG].collection,
    )
    return web.json_response({"facts": wire.to_json(facts)})


@routes.post("/v1/facts")
async def create_fact(request: web.Request) -> web.Response:
    """Store a new fact as a note."""
    fields = _fields(await v.json_body(request), NEW_FACT)
    if "text" not in fields:
        raise InvalidInputError("'text' is required")
    app = request.app
    fields.setdefault("source", "obsidian")
    fact = await app[JOBS].write(app[ENGRAM].fact_add, vault=app[CONFIG].collection, **fields)
    return web.json_response({"fact": wire.to_json(fact)}, status=201)


@routes.get("/v1/facts/{id}")
async def get_fact(request: web.Request) -> web.Response:
    """One fact."""
    fact_id = _fact_id(request)
    app = request.app
    fact = await in_reader(app, app[ENGRAM].fact_get, fact_id, vault=app[CONFIG].collection)
    return web.json_response({"fact": wire.to_json(fact)})


@routes.patch("/v1/facts/{id}")
async def update_fact(request: web.Request) -> web.Response:
    """Change some fields of a fact (its note is rewritten safely)."""
    fact_id = _fact_id(request)
    changes = _fields(await v.json_body(request), PATCH_FACT)
    if not changes:
        raise InvalidInputError("nothing to change")
    app = request.app
    fact = await app[JOBS].write(
        app[ENGRAM].fact_update, fact_id, vault=app[CONFIG].collection, **changes
    )
    return web.json_response({"fact": wire.to_json(fact)})


@routes.delete("/v1/facts/{id}")
async def archive_fact(request: web.Request) -> web.Response:
    """Archive a fact: its note stays, lifecycleState becomes archived."""
    fact_id = _fact_id(request)
    app = request.app
    fact = await app[JOBS].write(app[ENGRAM].fact_archive, fact_id, vault=app[CONFIG].collection)
    return web.json_response({"fact": wire.to_json(fact)})


@routes.post("/v1/facts/from-note")
async def fact_from_note(request: web.Request) -> web.Response:
    """Store a note, or a selection in it, as a fact."""
    body = await v.json_body(request)
    rel = await note_rel(request, v.text(body, "path", required=True, max_len=4096))
    selection = v.text(body, "selection", max_len=100_000)
    app = request.app
    fact = await app[JOBS].write(
        app[ENGRAM].fact_from_note, rel, selection=selection, vault=app[CONFIG].collection
    )
    return web.json_response({"fact": wire.to_json(fact)}, status=201)


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
