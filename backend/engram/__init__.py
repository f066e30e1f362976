"""Engram: local-first memory and search for Obsidian vaults."""

__version__ = "0.1.0"
