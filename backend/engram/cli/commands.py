"""Import every command module so its commands register on the `engram` group."""

from engram.cli import collections_cmds, graph_cmds, search_cmds, semantic_cmds  # noqa: F401
