"""Recall and deep search through the running daemon when it serves the vault asked for, else
in-process. Both paths return the facade's JSON shapes, so every output is the same either way.

A recall for another vault than the daemon's runs in-process.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from engram.cli.remote import DaemonClient, DaemonUnreachable, daemon_for

if TYPE_CHECKING:
    from engram.cli.main import State


def memory_daemon(state: State, no_daemon: bool, vault: str | None) -> DaemonClient | None:
    """The live daemon when it serves the vault this call acts on (the named or default one)."""
    daemon = daemon_for(state, no_daemon)
    if daemon is None or daemon.collection is None:
        return None
    return daemon if daemon.collection == state.engram.vault_name(vault) else None


def recall(
    state: State,
    no_daemon: bool,
    query: str,
    *,
    n: int,
    vault: str | None,
    states: tuple[str, ...] | None,
    fact_type: str | None,
    tags: Iterable[str],
    scope: str | None,
    since: str | None,
    until: str | None,
    tier_name: str | None,
    include_notes: bool,
    agent: str | None = None,
) -> list[dict[str, Any]]:
    """Recall hits as JSON (`RecallHit.to_dict`), from the daemon when it can answer."""
    tags = list(tags)
    daemon = memory_daemon(state, no_daemon, vault)
    if daemon is not None:
        try:
            return daemon.recall(
                query,
                n,
                type=fact_type,
                tags=tags,
                scope=scope,
                since=since,
                until=until,
                tier=tier_name,
                includeNotes=include_notes,
                allStates=states is not None,
                agent=agent,
            )
        except DaemonUnreachable:
            pass  # it stopped since it wrote its file: answer in-process
    hits = state.engram.recall(
        query,
        n=n,
        fact_type=fact_type,
        tags=tags,
        scope=scope,
        since=since,
        until=until,
        tier_name=tier_name,
        include_notes=include_notes,
        states=states,
        vault=vault,
        agent=agent,
    )
    return [h.to_dict() for h in hits]


def deep_search(
    state: State, no_daemon: bool, query: str, n: int, vault: str | None
) -> dict[str, Any]:
    """Deep search as JSON (`DeepSearchResult.to_dict`), from the daemon when it serves the
    vault."""
    daemon = memory_daemon(state, no_daemon, vault)
    if daemon is not None:
        try:
            return daemon.deep_search(query, n)
        except DaemonUnreachable:
            pass
    return state.engram.deep_search(query, n, vault).to_dict()
