"""Which notes are facts, adopting the ones people make, and the index row of a fact.

A note is a fact when it lives under the facts root (outside `daily/` and `ledger/`), or
anywhere else with a `factType` property (a note made from the `new-fact` template). A fact
note without an `id` was made by a person: adoption adds the missing properties and
nothing else, so the person's text and their own properties keep every byte.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from engram.memory import format as fmt
from engram.memory import props
from engram.memory.infer import infer_importance, infer_type
from engram.memory.model import DAILY_FOLDER, LEDGER_FOLDER, Fact, iso, new_id
from engram.memory.notes import is_conflict_copy
from engram.store.facts import FactRow


def is_candidate(
    rel: str, frontmatter: Mapping[str, Any], facts_root: str, templates: str | None
) -> bool:
    """True when the note at `rel` should be a fact."""
    if not rel.lower().endswith(".md") or is_conflict_copy(rel):
        return False
    if templates and (rel + "/").startswith(templates.rstrip("/") + "/"):
        return False
    if rel.startswith(facts_root + "/"):
        first = rel[len(facts_root) + 1 :].split("/", 1)
        return not (len(first) == 2 and first[0] in (DAILY_FOLDER, LEDGER_FOLDER))
    return "factType" in frontmatter


def adoption_changes(
    data: Mapping[str, Any], body: str, rel: str, title: str, modified: dt.datetime
) -> dict[str, Any]:
    """The properties a person's note lacks to be a complete fact (existing ones untouched)."""
    present = {k: v for k, v in data.items() if v is not None and v != ""}
    filled = dict(present)
    filled["id"] = new_id()
    filled.setdefault("title", title)
    text = fmt.from_props(filled, body, rel).text
    if "factType" not in filled and "type" not in filled:
        filled["factType"] = infer_type(f"{title}\n{text}")
    kind = fmt.fact_type(filled.get("factType", filled.get("type")))
    if "importanceScore" not in filled and "importance" not in filled:
        filled["importanceScore"] = infer_importance(f"{title}\n{text}", kind)
    if not any(k in filled for k in ("timestamp", "created", "date")):
        filled["timestamp"] = modified
    filled.setdefault("source", "human")
    filled.setdefault("createdBy", "human")
    filled.setdefault("lastEditedBy", "human")
    fact = fmt.from_props(filled, body, rel)
    wanted = fmt.fact_props(fact)
    return {k: v for k, v in wanted.items() if k not in present}


def adopt_text(text: str, rel: str, title: str, modified: dt.datetime) -> str | None:
    """The note's text with the fact properties it lacks; None when it cannot be adopted
    (broken frontmatter, or nothing written yet)."""
    data, body = props.read(text)
    if data is None or not body.strip():
        return None
    return props.edit(text, adoption_changes(data, body, rel, title, modified))


def row_for(
    fact: Fact, doc_id: int, doc_hash: str, mtime: dt.datetime, written: str | None
) -> FactRow:
    """The index row of a fact note; a hash Engram did not write means a person edited it."""
    if written is None:  # never written by Engram here: trust the note, and its file time
        editor = fact.last_edited_by
        changed = max(fact.changed_at, mtime) if editor == "human" else fact.changed_at
    elif written == doc_hash:  # as Engram wrote it (a pulled human edit stays human)
        editor, changed = fact.last_edited_by, fact.changed_at
    else:
        editor, changed = "human", max(fact.changed_at, mtime)
    return FactRow(
        id=fact.id,
        doc_id=doc_id,
        fact_type=fact.fact_type,
        lifecycle=fact.lifecycle,
        importance=fact.importance,
        confidence=fact.confidence,
        scope=fact.scope,
        created_at=iso(fact.timestamp),
        updated_at=iso(changed),
        superseded_by=fact.superseded_by,
        last_edited_by=editor,
    )
