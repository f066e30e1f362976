"""What a remote change does to a fact note that exists here: the conflict rules of
docs/convex.md ("How conflicts resolve") as one pure decision, which the vault side carries out.

- a tombstone archives the note (never deletes it);
- both sides equal: only the agreed state is recorded;
- the note unchanged since the last sync: it takes the remote version;
- both changed: three-way merge against the last synced version; when the same field changed
  apart, the remote version goes into the note and the local one into a conflict copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engram.sync.payload import content_hash, merge, normalized

ARCHIVED = ("archived", "pruned")
Kind = Literal["archive", "agree", "take", "merge", "conflict"]


@dataclass(frozen=True)
class Decision:
    """What to write into the note (`payload`, agreed at `agreed_hash`), and for a conflict,
    the fields that changed apart (the local version is kept in a copy)."""

    kind: Kind
    payload: dict[str, Any]
    agreed_hash: str
    conflicts: tuple[str, ...] = ()


def decide(
    mine: Mapping[str, Any],
    theirs: dict[str, Any],
    synced_hash: str | None,
    base: Mapping[str, Any] | None,
    tombstone: bool,
) -> Decision:
    """The rule for a note whose local payload is `mine` meeting the remote `theirs`
    (normalized), given the hash and payload last agreed on (None: never synced here)."""
    theirs_hash = content_hash(theirs)
    if tombstone:
        archived = dict(mine)
        if archived["lifecycleState"] not in ARCHIVED:
            archived["lifecycleState"] = "archived"
        archived = normalized(archived)
        return Decision("archive", archived, content_hash(archived))
    mine_hash = content_hash(mine)
    if mine_hash == theirs_hash:
        return Decision("agree", theirs, theirs_hash)
    if synced_hash is not None and mine_hash == synced_hash:  # only Convex changed
        return Decision("take", theirs, theirs_hash)
    result = merge(base, mine, theirs)
    if result.payload is not None:
        return Decision("merge", normalized(result.payload), theirs_hash)
    return Decision("conflict", theirs, theirs_hash, result.conflicts)
