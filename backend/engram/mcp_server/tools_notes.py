"""Note write tools: create, edit, move (links rewritten), delete (to the trash), link.

Every tool takes `dry_run` (returns the unified diff of every file it would touch and changes
nothing) and, for existing notes, `expected_hash` (the hash or #docid the agent saw: a note
changed since is refused, never overwritten). Writes are atomic and indexed at once.

Hints for hosts: none is read-only; edit, move and delete are destructive. Only create and
link are idempotent: a repeated append appends again, and a repeated move or delete may act
on another note, since a note named by title or alias can name a different file once the
first one is gone.
"""

from __future__ import annotations

from typing import Any

from engram.mcp_server import schema as s
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import fit_json
from engram.mcp_server.schema import Tool

NOTE = "The note: its path, file name, title, alias or engram://collection/path URI."
HASH = (
    "The content hash (or its first 6+ hex, the docid) of the note as you last read it; the "
    "write is refused with a conflict if the note changed since. Strongly recommended."
)
DRY = "Only show the unified diff of every file this would change; write nothing."
COLLECTION = "The collection (default: the vault's, or the only one)."
HINT = "Use dry_run to preview, or raise max_chars to see the whole diff."


async def _run(gw: Gateway, a: dict[str, Any], call: Any) -> str:
    col = a.get("collection") or await gw.vault_name()
    data = await gw.run(lambda e: call(e, col).to_dict())
    return fit_json(data, a["max_chars"], HINT)


async def create(gw: Gateway, a: dict[str, Any]) -> str:
    """Create a note (never overwrites)."""
    return await _run(
        gw,
        a,
        lambda e, col: e.note_create(
            a.get("path"),
            title=a.get("title"),
            folder=a.get("folder"),
            body=a["body"],
            frontmatter=a.get("frontmatter"),
            dry_run=a["dry_run"],
            collection=col,
        ),
    )


async def edit(gw: Gateway, a: dict[str, Any]) -> str:
    """Edit a note's text or properties."""
    return await _run(
        gw,
        a,
        lambda e, col: e.note_edit(
            a["path"],
            append=a.get("append"),
            prepend=a.get("prepend"),
            heading=a.get("heading"),
            section=a.get("section"),
            find=a.get("find"),
            replace=a.get("replace"),
            regex=a["regex"],
            count=a["count"],
            properties=a.get("properties"),
            remove_properties=a.get("remove_properties") or (),
            expected_hash=a.get("expected_hash"),
            dry_run=a["dry_run"],
            collection=col,
        ),
    )


async def move(gw: Gateway, a: dict[str, Any]) -> str:
    """Move or rename a note, rewriting every link to it."""
    return await _run(
        gw,
        a,
        lambda e, col: e.note_move(
            a["path"],
            a["to"],
            expected_hash=a.get("expected_hash"),
            dry_run=a["dry_run"],
            collection=col,
        ),
    )


async def delete(gw: Gateway, a: dict[str, Any]) -> str:
    """Move a note to the vault's .trash/."""
    return await _run(
        gw,
        a,
        lambda e, col: e.note_delete(
            a["path"], expected_hash=a.get("expected_hash"), dry_run=a["dry_run"], collection=col
        ),
    )


async def link(gw: Gateway, a: dict[str, Any]) -> str:
    """Add a [[link]] to another note in a section."""
    return await _run(
        gw,
        a,
        lambda e, col: e.note_link(
            a["path"],
            a["target"],
            section=a["section"],
            display=a.get("display"),
            expected_hash=a.get("expected_hash"),
            dry_run=a["dry_run"],
            collection=col,
        ),
    )


RETURNS = (
    "Returns JSON {operation, path, hash (the new content hash), changed, files: [{action, path, "
    "diff}], linksRewritten, brokenLinks, message}."
)

TOOLS = (
    Tool(
        "note_create",
        "Create a note",
        "Create a new markdown note from a path or a title (in folder), with body and "
        "frontmatter properties. Never overwrites an existing file. " + RETURNS,
        s.obj(
            path=s.text("Vault-relative path, e.g. Projects/Launch.md (or give title).", 4096),
            title=s.text("A title: the file name is made from it (when no path).", 500),
            folder=s.text("Folder for a note made from a title.", 4096),
            body=s.text("The note's markdown text.", 1_000_000, default=""),
            frontmatter={
                "type": "object",
                "description": "Properties to write as YAML.",
                "additionalProperties": True,
            },
            dry_run=s.flag(DRY),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        create,
        read_only=False,
        idempotent=True,  # never overwrites: a repeat finds the note there and changes nothing
    ),
    Tool(
        "note_edit",
        "Edit a note",
        "Change a note: append or prepend text (to the whole note or under `heading`), replace "
        "the section under a heading, find/replace (exact or regex, `count` replacements, 0 = "
        "all), set or remove frontmatter properties (other properties untouched). Read the "
        "note with get first and pass its hash as expected_hash. " + RETURNS,
        s.obj(
            ["path"],
            path=s.text(NOTE, 4096, 1),
            append=s.text("Text to add at the end (of the section with heading).", 1_000_000),
            prepend=s.text("Text to add at the start (of the section with heading).", 1_000_000),
            heading=s.text("A heading's text: append/prepend/section act under it.", 1000),
            section=s.text("New text for the whole section under heading.", 1_000_000),
            find=s.text("Text (or regex) to find.", 100_000),
            replace=s.text("Replacement for find.", 1_000_000),
            regex=s.flag("find is a regular expression."),
            count=s.integer("Replace at most this many matches (0: all).", 0, 100_000, 0),
            properties={
                "type": "object",
                "description": "Frontmatter properties to set.",
                "additionalProperties": True,
            },
            remove_properties=s.texts("Frontmatter properties to remove.", 100, 200),
            expected_hash=s.text(HASH, 64, 6),
            dry_run=s.flag(DRY),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        edit,
        read_only=False,
        destructive=True,  # replaces sections and text, removes properties
    ),
    Tool(
        "note_move",
        "Move or rename a note",
        "Move or rename a note and rewrite every link to it across the vault (wikilinks with "
        "headings and aliases, embeds, markdown links), keeping each link's style; all files "
        "change together or none does. Preview with dry_run. " + RETURNS,
        s.obj(
            ["path", "to"],
            path=s.text(NOTE, 4096, 1),
            to=s.text(
                "The new vault-relative path (a folder ending in / keeps the name).", 4096, 1
            ),
            expected_hash=s.text(HASH, 64, 6),
            dry_run=s.flag(DRY),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        move,
        read_only=False,
        destructive=True,  # the old path disappears and other notes are rewritten
    ),
    Tool(
        "note_delete",
        "Delete a note (to the trash)",
        "Move a note to the vault's .trash/ folder, as Obsidian does (recoverable, never a "
        "hard delete); lists the links that now point nowhere. " + RETURNS,
        s.obj(
            ["path"],
            path=s.text(NOTE, 4096, 1),
            expected_hash=s.text(HASH, 64, 6),
            dry_run=s.flag(DRY),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        delete,
        read_only=False,
        destructive=True,  # recoverable from .trash/, but the note leaves the vault
    ),
    Tool(
        "note_link",
        "Link two notes",
        "Add a [[link]] to target in a section of the note (created when missing; nothing "
        "happens if the section already links there). " + RETURNS,
        s.obj(
            ["path", "target"],
            path=s.text("The note that gets the link. " + NOTE, 4096, 1),
            target=s.text("The note to link to. " + NOTE, 4096, 1),
            section=s.text("The heading to add the link under.", 500) | {"default": "Related"},
            display=s.text("Display text for the link.", 500),
            expected_hash=s.text(HASH, 64, 6),
            dry_run=s.flag(DRY),
            collection=s.text(COLLECTION, 200),
            max_chars=s.max_chars(),
        ),
        link,
        read_only=False,
        idempotent=True,  # a section that already links to the target is left alone
    ),
)
