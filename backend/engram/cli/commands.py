"""Import every command module so its commands register on the `engram` group."""

from engram.cli import (  # noqa: F401
    collections_cmds,
    graph_cmds,
    graph_files_cmds,
    hook_cmds,
    ledger_cmds,
    mcp_cmds,
    memory_cmds,
    notes_cmds,
    rebuild_cmds,
    search_cmds,
    semantic_cmds,
    serve_cmds,
    session_cmds,
    sync_cmds,
    tags_cmds,
)
