"""Note write tools: create, edit, move (links rewritten), delete (to the trash), link.

Every tool takes `dryRun` (returns the unified diff of every file it would touch and changes
nothing) and, for existing notes, `expectedHash` (the hash or #docid the agent saw: a note
changed since is refused, never overwritten). Writes are atomic and indexed at once.

Hints for hosts: none is read-only; edit, move and delete are destructive. Only create and
link are idempotent: a repeated append appends again, and a repeated move or delete may act
on another note, since a note named by title or alias can name a different file once the
first one is gone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, ParamSpec

from engram import codec
from engram.mcp_server import args
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import fit_json
from engram.mcp_server.schema import Tool
from engram.service import requests as rq
from engram.service.engram import Engram

P = ParamSpec("P")

NOTE = "the note: its path, file name, title, alias or engram://collection/path"
HASH = (
    "the hash (or its first 6+ hex, the docid) of the note as you last read it: the write is "
    "refused if the note changed since. Strongly recommended"
)
HINT = "Use dryRun to preview, or raise maxChars to see the whole diff."
DOCS = {"path": NOTE, "expectedHash": HASH}


def shaped(change: object, max_chars: int) -> str:
    """A note change (vault.changes.NoteChange) as an agent reads it: each file's diff once
    (the reply's joined `diff` repeats them), no empty fields, no hashes but the note's."""
    data: dict[str, Any] = codec.encode(change)
    data.pop("diff", None)
    data["files"] = [
        {
            "action": f["action"],
            "path": f["path"],
            "from": f["oldPath"],
            "linksRewritten": f["linksRewritten"] or None,
            "diff": f["diff"],
        }
        for f in data["files"]
    ]
    for key in ("collection", "oldPath", "message", "brokenLinks", "linksRewritten", "dryRun"):
        if not data.get(key):
            data.pop(key, None)
    return fit_json(data, max_chars, HINT)


def change(
    fn: Callable[Concatenate[Engram, P], object],
) -> Callable[[Gateway, Any, args.InCollection], Awaitable[str]]:
    """The tool running the note write `fn` with the request as sent, in the collection
    asked for or the vault's."""

    async def handle(gw: Gateway, r: Any, x: args.InCollection) -> str:
        found = await gw.send(fn, r, collection=await gw.collection(x.collection))
        return shaped(found, x.max_chars)

    return handle


RETURNS = (
    "Returns JSON {operation, path, hash (pass it as the next expectedHash), changed, "
    "files: [{action, path, diff}]}."
)

TOOLS: tuple[Tool[Any, Any], ...] = (
    Tool(
        "note_create",
        "Create a note",
        "Create a new markdown note from a path or a title (in folder), with body and "
        "frontmatter properties. Never overwrites an existing file. " + RETURNS,
        rq.NoteCreate,
        args.InCollection,
        change(Engram.note_create),
        docs={"path": "vault path, e.g. Projects/Launch.md (or give title)"},
        read_only=False,
        idempotent=True,  # never overwrites: a repeat finds the note there and changes nothing
    ),
    Tool(
        "note_edit",
        "Edit a note",
        "Change a note: append or prepend text (to the whole note or under heading), replace "
        "the section under a heading, find and replace text, set or remove frontmatter "
        "properties (others untouched). Read the note with get first and "
        "pass its hash as expectedHash. " + RETURNS,
        rq.NoteEdit,
        args.InCollection,
        change(Engram.note_edit),
        docs={
            **DOCS,
            "heading": "a heading: append, prepend and section act under it",
            "prepend": "text to add at the start (after the frontmatter, or under heading)",
        },
        read_only=False,
        destructive=True,  # replaces sections and text, removes properties
    ),
    Tool(
        "note_move",
        "Move or rename a note",
        "Move or rename a note and rewrite every link to it across the vault (wikilinks with "
        "headings and aliases, embeds, markdown links), keeping each link's style; all files "
        "change together or none does. Preview with dryRun. " + RETURNS,
        rq.NoteMove,
        args.InCollection,
        change(Engram.note_move),
        docs={**DOCS, "to": "the new vault path (a folder ending in / keeps the name)"},
        read_only=False,
        destructive=True,  # the old path disappears and other notes are rewritten
    ),
    Tool(
        "note_delete",
        "Delete a note (to the trash)",
        "Move a note to the vault's .trash/ folder, as Obsidian does (recoverable, never a "
        "hard delete); lists the links that now point nowhere. " + RETURNS,
        rq.NoteDelete,
        args.InCollection,
        change(Engram.note_delete),
        docs=DOCS,
        read_only=False,
        destructive=True,  # recoverable from .trash/, but the note leaves the vault
    ),
    Tool(
        "note_link",
        "Link two notes",
        "Add a [[link]] to target in a section of the note (created when missing; nothing "
        "happens if the section already links there). " + RETURNS,
        rq.NoteLink,
        args.InCollection,
        change(Engram.note_link),
        docs={**DOCS, "path": "the note that gets the link: " + NOTE},
        read_only=False,
        idempotent=True,  # a section that already links to the target is left alone
    ),
)
