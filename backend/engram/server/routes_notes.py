"""Routes that write notes: create, edit, move, delete (to the trash) and link.

Each takes a JSON object with camelCase fields, `dryRun` (answer with the diff, write nothing)
and, where a note exists already, `expectedHash` (the sha256 or docid the client saw; a
mismatch is 409). Writes run on the writer thread, ahead of any index job, and answer once
the touched notes are indexed and embedded; the paths are also queued for the usual index job,
which embeds what a very long note has beyond what the write did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from engram.errors import InvalidInputError
from engram.server import validate as v
from engram.server.state import CONFIG, ENGRAM, JOBS

routes = web.RouteTableDef()
MAX_TEXT = 1_000_000
MAX_PATH = 4096
COMMON = ("dryRun", "expectedHash")


def _only(body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise InvalidInputError(f"unknown field {unknown[0]!r}; allowed: {', '.join(allowed)}")


def _path(body: dict[str, Any], key: str, required: bool = True) -> str | None:
    return v.text(body, key, required=required, max_len=MAX_PATH)


def _mapping(body: dict[str, Any], key: str) -> dict[str, Any] | None:
    if key not in body:
        return None
    value = v.present(body, key)
    if not isinstance(value, dict):
        raise InvalidInputError(f"{key!r} must be an object of property names to values")
    for name in value:
        v.clean(name, key)
    return value


def _common(body: dict[str, Any], with_hash: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"dry_run": v.flag(body, "dryRun")}
    if with_hash:
        out["expected_hash"] = v.text(body, "expectedHash", max_len=64)
    return out


async def _write(
    request: web.Request, method: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    """Run one facade write on the writer thread for the served vault; queue the rest."""
    app = request.app
    change = await app[JOBS].write(method, *args, collection=app[CONFIG].collection, **kwargs)
    if change.changed and not change.dry_run:
        touched = {f.path for f in change.files} | {f.old_path for f in change.files if f.old_path}
        app[JOBS].submit(touched, "notes")
    return change


def _reply(change: Any, created: bool = False) -> web.Response:
    status = 201 if created and change.changed and not change.dry_run else 200
    return web.json_response({"change": change.to_dict()}, status=status)


@routes.post("/v1/notes")
async def create_note(request: web.Request) -> web.Response:
    """Create a note from a path or a title, a body and frontmatter (never overwrites)."""
    body = await v.json_body(request)
    _only(body, ("path", "title", "folder", "body", "frontmatter", "dryRun"))
    if body.get("path") == "":
        raise InvalidInputError("'path' must not be empty (leave it out to name the note by title)")
    change = await _write(
        request,
        request.app[ENGRAM].note_create,
        _path(body, "path", required=False),
        title=v.text(body, "title", max_len=1000),
        folder=_path(body, "folder", required=False),
        body=v.text(body, "body", default="", max_len=MAX_TEXT) or "",
        frontmatter=_mapping(body, "frontmatter"),
        **_common(body, with_hash=False),
    )
    return _reply(change, created=True)


@routes.post("/v1/notes/edit")
async def edit_note(request: web.Request) -> web.Response:
    """Append, prepend, replace a section, find/replace, set or remove properties."""
    body = await v.json_body(request)
    _only(
        body,
        ("path", "append", "prepend", "heading", "section", "find", "replace", "regex", "count",
         "properties", "removeProperties", *COMMON),
    )  # fmt: skip
    change = await _write(
        request,
        request.app[ENGRAM].note_edit,
        _path(body, "path"),
        append=v.text(body, "append", max_len=MAX_TEXT),
        prepend=v.text(body, "prepend", max_len=MAX_TEXT),
        heading=v.text(body, "heading", max_len=1000),
        section=v.text(body, "section", max_len=MAX_TEXT),
        find=v.text(body, "find", max_len=MAX_TEXT),
        replace=v.text(body, "replace", max_len=MAX_TEXT),
        regex=v.flag(body, "regex"),
        count=v.integer(body, "count", 0, low=0, high=1_000_000),
        properties=_mapping(body, "properties"),
        remove_properties=v.strings(body, "removeProperties", max_len=1000),
        **_common(body),
    )
    return _reply(change)


@routes.post("/v1/notes/move")
async def move_note(request: web.Request) -> web.Response:
    """Move or rename a note and rewrite every link to it, all files at once."""
    body = await v.json_body(request)
    _only(body, ("path", "to", *COMMON))
    change = await _write(
        request, request.app[ENGRAM].note_move, _path(body, "path"), _path(body, "to"),
        **_common(body),
    )  # fmt: skip
    return _reply(change)


@routes.post("/v1/notes/delete")
async def delete_note(request: web.Request) -> web.Response:
    """Move a note to the vault's .trash folder (never erased)."""
    body = await v.json_body(request)
    _only(body, ("path", *COMMON))
    change = await _write(
        request, request.app[ENGRAM].note_delete, _path(body, "path"), **_common(body)
    )
    return _reply(change)


@routes.post("/v1/notes/link")
async def link_notes(request: web.Request) -> web.Response:
    """Add a [[link]] to `target` at the end of a section of the note at `path`."""
    body = await v.json_body(request)
    _only(body, ("path", "target", "section", "display", *COMMON))
    change = await _write(
        request,
        request.app[ENGRAM].note_link,
        _path(body, "path"),
        _path(body, "target"),
        section=v.text(body, "section", default="Related", max_len=1000) or "Related",
        display=v.text(body, "display", max_len=1000),
        **_common(body),
    )
    return _reply(change)
