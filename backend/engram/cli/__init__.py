"""The command line: thin adapters over the facade."""

from engram.cli.lazy import DEFERRED, defer

defer(*DEFERRED)  # before anything imports them (see cli/lazy.py)

from engram.cli.main import main  # noqa: E402

__all__ = ["main"]
