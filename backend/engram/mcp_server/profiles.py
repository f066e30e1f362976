"""Tool sets: what `engram mcp --tools` lists.

An agent reads every tool's name, description and schema before its first call, so the
default set is small: `lean`, eight tools with their everyday arguments, at most 10,000
characters of tools/list (tests/integration/test_mcp_profiles.py holds it there). `all` is
every tool with every argument; a comma-separated list of tool names picks those, whole.
"""

from __future__ import annotations

from typing import Any

from engram.errors import InvalidInputError
from engram.mcp_server import tools_graph, tools_memory, tools_notes, tools_search
from engram.mcp_server.schema import Tool

TOOLS: tuple[Tool[Any, Any], ...] = (
    tools_search.TOOLS + tools_memory.TOOLS + tools_graph.TOOLS + tools_notes.TOOLS
)
MAX_LEAN_TOOLS = 8
MAX_LEAN_CHARS = 10_000

# The lean set: each tool and the arguments it offers there (the rest keep their defaults:
# the inline query syntax covers filters, a date phrase in the query covers since/until).
LEAN: dict[str, tuple[str, ...]] = {
    "query": ("q", "n", "mode", "maxChars"),
    "get": ("ref", "from", "lines", "maxChars"),
    "memory_recall": ("q", "n", "type", "tags", "includeNotes", "maxChars"),
    "memory_store_fact": ("text", "type", "title", "importance", "tags", "entities"),
    "memory_get_context": ("q", "profile", "budget"),
    "memory_wake": ("maxChars",),
    "note_create": ("path", "title", "folder", "body", "frontmatter", "dryRun"),
    "note_edit": (
        *("path", "append", "prepend", "heading", "section", "find", "replace"),
        *("properties", "removeProperties", "expectedHash", "dryRun"),
    ),
}
PROFILES = ("lean", "all")

INSTRUCTIONS = {
    "lean": (
        "Engram is the user's local search and memory over their Obsidian vault. Start a "
        "session with memory_wake (or memory_get_context for a task); find notes with query "
        "and read them with get; store durable decisions, preferences and lessons with "
        "memory_store_fact and find them with memory_recall; write notes with note_create and "
        "note_edit. The user can enable more tools (graph, tags, checkpoints, moves) with "
        "`engram mcp --tools all` (or /mcp?tools=all)."
    ),
    "all": (
        "Engram is the user's local search and memory over their Obsidian vault and markdown "
        "folders. Start a session with memory_wake (or memory_get_context for a task); find "
        "notes with query (best), search (exact words) or vsearch (meaning) and read them with "
        "get; store durable decisions, preferences and lessons with memory_store_fact and find "
        "them with memory_recall; explore links with the graph_* tools; active_note is what "
        "the user has open in Obsidian. Save progress with memory_checkpoint and finish with "
        "memory_end_session."
    ),
}


def select(spec: str) -> tuple[Tool[Any, Any], ...]:
    """The tools of a profile (lean, all) or of a comma-separated list of tool names."""
    by_name = {t.name: t for t in TOOLS}
    if spec == "all":
        return TOOLS
    if spec == "lean":
        return tuple(by_name[name].only(names) for name, names in LEAN.items())
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in by_name]
    if unknown or not names:
        raise InvalidInputError(
            f"no tool named {unknown[0]!r}" if unknown else "no tools named",
            hint=f"--tools takes {' or '.join(PROFILES)}, or tool names separated by commas: "
            + ", ".join(by_name),
        )
    return tuple(by_name[n] for n in dict.fromkeys(names))


def instructions(spec: str) -> str:
    """What the server tells the agent at initialize, for its tool set."""
    return INSTRUCTIONS.get(spec, INSTRUCTIONS["all"])
