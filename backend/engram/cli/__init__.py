"""The command line: thin adapters over the facade."""

from engram.cli.main import main

__all__ = ["main"]
