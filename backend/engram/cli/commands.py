"""Import every command module so its commands register on the `engram` group."""

from engram.cli import collections_cmds, memory_cmds, search_cmds, session_cmds  # noqa: F401
