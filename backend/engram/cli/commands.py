"""Import every command module so its commands register on the `engram` group."""

from engram.cli import collections_cmds, search_cmds, serve_cmds  # noqa: F401
