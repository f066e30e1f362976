"""The person's notes and Engram's memory: which kind of document a search keeps.

Engram's memory is every file under a vault's facts folder (`Engram/` by default): fact notes,
the ledger, daily notes, weekly reflections. Everything else is the person's. A search keeps
the person's notes unless it asks for a kind (`kind:memory`, `kind:all`, `--memory`), names
where to look (`path:`), or lists its documents (recall ranks fact notes by id).
"""

from __future__ import annotations

from dataclasses import replace

from engram.config import Settings
from engram.memory.model import DAILY_FOLDER, LEDGER_FOLDER
from engram.search.query import ParsedQuery
from engram.store.filters import KINDS


def with_lane(q: ParsedQuery, settings: Settings) -> ParsedQuery:
    """`q` keeping the kinds it asks for, by default the person's notes, with where each
    vault keeps its memory. A query of no words and no filters is left as it is (an error)."""
    f = q.filters
    kinds = f.kinds
    if not kinds and (f.path_prefixes or f.doc_ids is not None):
        return q
    if not kinds and not q.has_terms and f.is_empty():
        return q
    if set(kinds) >= set(KINDS):
        return replace(q, filters=replace(f, kinds=KINDS))
    kinds = kinds or ("note",)
    return replace(q, filters=replace(f, kinds=kinds, memory_paths=memory_paths(settings)))


def memory_paths(settings: Settings) -> tuple[tuple[str, str], ...]:
    """(collection, path prefix) of each vault's facts folder."""
    return tuple(
        (v.name, v.facts_root.strip("/") + "/")
        for v in settings.vaults
        if settings.collection(v.name) is not None and v.facts_root.strip("/")
    )


def generated_paths(settings: Settings, collection: str) -> tuple[str, ...]:
    """Path prefixes of the notes Engram writes from facts in a vault (daily notes, the
    ledger and its reflections): restatements, never links of the person's own."""
    v = settings.vault(collection)
    if v is None or not v.facts_root.strip("/"):
        return ()
    root = v.facts_root.strip("/")
    return (f"{root}/{DAILY_FOLDER}/", f"{root}/{LEDGER_FOLDER}/")
