"""Core routes: health, status, search/query, documents, note metadata, reindex, active note.

Each handler parses input, calls one facade method off the event loop, and shapes the JSON.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from aiohttp import web

from engram import __version__, codec
from engram.errors import InvalidInputError
from engram.server import openapi
from engram.server import validate as v
from engram.server.discovery import NAME, PROTOCOL
from engram.server.state import (
    CONFIG,
    ENGRAM,
    JOBS,
    RUNTIME,
    SYNC,
    WATCHER,
    ActiveNote,
    in_reader,
    now_iso,
)

routes = web.RouteTableDef()
MODES = ("search", "vsearch", "query")


@routes.get("/v1/health")
async def health(request: web.Request) -> web.Response:
    """Liveness and protocol, without a token."""
    return web.json_response(
        {"ok": True, "name": NAME, "version": __version__, "protocol": PROTOCOL}
    )


@routes.get("/v1/openapi.json")
async def openapi_json(request: web.Request) -> web.Response:
    """This API, described."""
    return web.json_response(openapi.document())


@routes.get("/v1/status")
async def status(request: web.Request) -> web.Response:
    """Counts, facts folder, indexing progress, models, watcher, sync and the last error."""
    app = request.app
    engram, cfg, jobs, watcher = app[ENGRAM], app[CONFIG], app[JOBS], app[WATCHER]
    info = await in_reader(app, engram.status)
    counts = {c.name: c.documents for c in info.collections}
    indexing = jobs.snapshot()
    indexing["lastUpdate"] = info.index.last_update
    models = await in_reader(app, engram.model_status)
    stages = await in_reader(app, engram.query_stages)
    memory = engram.settings.vault(cfg.collection)
    sync = app[SYNC].status(await in_reader(app, engram.sync_status, cfg.collection))
    return web.json_response(
        {
            "version": __version__,
            "vault": {"path": str(cfg.vault), "collection": cfg.collection},
            "facts": {"root": memory.facts_root} if memory is not None else None,
            "documents": counts.get(cfg.collection, 0),
            "chunks": info.embeddings.chunks,
            "embedded": info.embeddings.embedded,
            "indexing": indexing,
            "models": codec.encode(models),
            "queryStages": stages,
            "languageAdvice": info.languages.advice,
            "watcher": {
                "enabled": watcher is not None,
                "queue": (watcher.queue if watcher else 0) + jobs.queued_paths(),
                "error": watcher.error if watcher else None,
            },
            "sync": codec.encode(sync),
            "lastError": app[RUNTIME].last_error,
            "collections": codec.encode(info.collections),
            "index": codec.encode(info.index),
            "startedAt": app[RUNTIME].started_at,
        }
    )


async def note_rel(request: web.Request, path: Any) -> str:
    """A vault-relative note path from the client, refused if it leaves the vault."""
    app = request.app
    if not isinstance(path, str):
        raise InvalidInputError("'path' must be a string")
    return await in_reader(app, app[ENGRAM].note_path, app[CONFIG].collection, path)


@routes.post("/v1/index")
async def reindex(request: web.Request) -> web.Response:
    """Queue re-indexing of some paths (changed, deleted, renamed) or of everything."""
    body = await v.json_body(request, allow_empty=True)
    app = request.app
    if not body or not ({"paths", "deleted", "renamed"} & body.keys()):
        job = app[JOBS].submit(None, "api")
        return web.json_response({"job": {"id": job.id, "state": job.state}}, status=202)
    raw = v.strings(body, "paths") + v.strings(body, "deleted")
    renamed = v.present(body, "renamed") if "renamed" in body else []
    if not isinstance(renamed, list) or not all(
        isinstance(r, dict) and isinstance(r.get("from"), str) and isinstance(r.get("to"), str)
        for r in renamed
    ):
        raise InvalidInputError('\'renamed\' must be a list of {"from": path, "to": path}')
    raw += [r[k] for r in renamed for k in ("from", "to")]
    if len(raw) > v.MAX_LIST_ITEMS:
        raise InvalidInputError(f"at most {v.MAX_LIST_ITEMS} paths per request")
    engram, collection = app[ENGRAM], app[CONFIG].collection

    def normalize() -> list[str]:
        return [engram.note_path(collection, p) for p in raw]

    paths = await in_reader(app, normalize)
    job = app[JOBS].submit(paths, "api")
    return web.json_response({"job": {"id": job.id, "state": job.state}}, status=202)


# The plugin re-reports the open note every minute; a report older than this means Obsidian
# closed without saying so (a crash, a sleeping laptop), and agents must not be told about it.
ACTIVE_NOTE_STALE_SECONDS = 300


@routes.post("/v1/active-note")
async def set_active_note(request: web.Request) -> web.Response:
    """Remember the note open in Obsidian (for agents asking what the user is looking at);
    `{"path": null}` forgets it (no note open, or the plugin is unloading)."""
    body = await v.json_body(request)
    runtime = request.app[RUNTIME]
    selection = v.text(body, "selection", default="", max_len=200_000) or ""
    line = v.integer(body, "cursorLine", 0, low=0, high=10_000_000)
    if "path" in body and body["path"] is None:
        runtime.active_note = None
        return web.Response(status=204)
    rel = await note_rel(request, v.text(body, "path", required=True, max_len=4096))
    runtime.active_note = ActiveNote(rel, selection, line, now_iso())
    return web.Response(status=204)


@routes.get("/v1/active-note")
async def get_active_note(request: web.Request) -> web.Response:
    """The note last reported open in Obsidian with its title, or null when none was reported
    in the last ACTIVE_NOTE_STALE_SECONDS."""
    note = request.app[RUNTIME].active_note
    if note is None or _age_seconds(note.at) > ACTIVE_NOTE_STALE_SECONDS:
        return web.json_response({"activeNote": None})
    app = request.app
    title = await in_reader(app, app[ENGRAM].note_title, app[CONFIG].collection, note.path)
    return web.json_response({"activeNote": {**codec.encode(note), "title": title}})


def _age_seconds(at: str) -> float:
    """Seconds since an ISO 8601 time (`now_iso()`); unreadable counts as stale."""
    try:
        then = dt.datetime.fromisoformat(at)
    except ValueError:
        return float("inf")
    if then.tzinfo is None:
        then = then.replace(tzinfo=dt.UTC)
    return (dt.datetime.now(dt.UTC) - then).total_seconds()


@routes.post("/v1/token/rotate")
async def rotate_token(request: web.Request) -> web.Response:
    """Replace the token; discovery files are rewritten, this request's token stops working."""
    runtime = request.app[RUNTIME]
    await in_reader(request.app, runtime.rotate)
    return web.json_response({"rotated": True})
