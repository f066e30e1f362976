"""A fact as Convex stores it: the payload both sides compare, hash and merge.

The payload is derived from the note alone (never from file times), so the same note always
gives the same hash: that hash, remembered at each sync, is how a local edit is told apart
from an unchanged note. Applying a remote fact writes a note whose payload is the remote's
normalised form, so a pulled fact is never pushed back.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import merge3

from engram.memory import format as fmt
from engram.memory.model import Fact, clean_line, iso, normalize_text

SCALARS = (
    "externalId",
    "title",
    "text",
    "factType",
    "source",
    "createdBy",
    "scope",
    "timestamp",
    "updatedAt",
    "importanceScore",
    "confidence",
    "lifecycleState",
    "supersededBy",
    "supersedes",
    "lastEditedBy",
)
LISTS = ("tags", "entities", "contradictsWith")
FIELDS = SCALARS + LISTS


def payload_of(fact: Fact, edited_by: str | None = None) -> dict[str, Any]:
    """The Convex `fact` argument for a fact note (`edited_by`: the index's verdict on who
    last changed the note, which wins over a stale `lastEditedBy` property)."""
    human = "human" in (edited_by, fact.last_edited_by)
    out: dict[str, Any] = {
        "externalId": fact.id,
        "title": fact.title,
        "text": fact.text,
        "factType": fact.fact_type,
        "source": fact.source,
        "createdBy": fact.created_by,
        "scope": fact.scope,
        "timestamp": iso(fact.timestamp),
        "updatedAt": iso(fact.updated_at) if fact.updated_at else None,
        "importanceScore": round(float(fact.importance), 4),
        "confidence": round(float(fact.confidence), 4),
        "lifecycleState": fact.lifecycle,
        "supersededBy": fact.superseded_by,
        "supersedes": fact.supersedes,
        "lastEditedBy": "human" if human else "system",
        "tags": list(fact.tags),
        "entities": list(fact.entities),
        "contradictsWith": list(fact.contradicts_with),
    }
    return {k: v for k, v in out.items() if v is not None}


def fact_of(payload: Mapping[str, Any], path: str = "") -> Fact:
    """The Fact a payload describes (what a pulled fact's note will say)."""
    data = {k: payload.get(k) for k in FIELDS}
    return Fact(
        id=str(data["externalId"]),
        title=clean_line(str(data["title"] or "")) or "Untitled fact",
        text=normalize_text(str(data["text"] or "")),
        fact_type=fmt.fact_type(data["factType"]),
        timestamp=fmt.to_time(data["timestamp"]) or dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        updated_at=fmt.to_time(data["updatedAt"]),
        source=_text(data["source"], "engram"),
        created_by=_text(data["createdBy"], "engram"),
        scope=_text(data["scope"], "default"),
        tags=tuple(fmt.str_list(data["tags"])),
        entities=tuple(fmt.str_list(data["entities"])),
        importance=fmt.unit(data["importanceScore"], 0.5),
        confidence=fmt.unit(data["confidence"], 1.0),
        lifecycle=str(data["lifecycleState"] or "active"),
        superseded_by=fmt.ref(data["supersededBy"]),
        supersedes=fmt.ref(data["supersedes"]),
        contradicts_with=tuple(fmt.str_list(data["contradictsWith"])),
        last_edited_by="human" if data["lastEditedBy"] == "human" else "system",
        path=path,
    )


def normalized(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A payload (a remote fact, say) as it reads back from the note it would become."""
    return payload_of(fact_of(payload))


def content_hash(payload: Mapping[str, Any]) -> str:
    """SHA-256 of the payload as JSON with sorted keys (absent and null are the same)."""
    clean = {k: v for k, v in payload.items() if v is not None and k in FIELDS}
    text = json.dumps(clean, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def remote_fields(remote: Mapping[str, Any]) -> dict[str, Any]:
    """Only the fact fields of a fact as Convex returns it (no version, change seq...)."""
    return {k: remote[k] for k in FIELDS if remote.get(k) is not None}


@dataclass(frozen=True)
class Merge:
    """A three-way merge: the merged payload, or the fields both sides changed apart."""

    payload: dict[str, Any] | None
    conflicts: tuple[str, ...] = ()


def merge(
    base: Mapping[str, Any] | None, local: Mapping[str, Any], remote: Mapping[str, Any]
) -> Merge:
    """Three-way merge of fact payloads against the last synced version.

    A field changed on one side takes that side. Changed on both: lists merge as sets of
    additions and removals, the text merges line by line, `updatedAt` takes the later time
    and `lastEditedBy` stays human if either was; any other field changed to two different
    values is a conflict. With no base (never synced here) every difference conflicts.
    """
    out: dict[str, Any] = {}
    conflicts: list[str] = []
    for key in FIELDS:
        b = None if base is None else base.get(key)
        mine, theirs = local.get(key), remote.get(key)
        if mine == theirs:
            value = mine
        elif base is not None and mine == b:
            value = theirs
        elif base is not None and theirs == b:
            value = mine
        elif key in LISTS and base is not None:
            value = _merge_list(b or [], mine or [], theirs or [])
        elif key == "updatedAt":
            value = max(str(mine or ""), str(theirs or "")) or None
        elif key == "lastEditedBy":
            value = "human"
        elif key == "text" and base is not None:
            value = _merge_text(str(b or ""), str(mine or ""), str(theirs or ""))
            if value is None:
                conflicts.append(key)
        else:
            conflicts.append(key)
            value = None
        if value is not None:
            out[key] = value
    return Merge(None if conflicts else out, tuple(conflicts))


def _merge_list(base: list[Any], mine: list[Any], theirs: list[Any]) -> list[Any]:
    removed = (set(base) - set(mine)) | (set(base) - set(theirs))
    return [x for x in dict.fromkeys([*mine, *theirs]) if x not in removed]


def _merge_text(base: str, mine: str, theirs: str) -> str | None:
    """Line-based three-way merge; None when both sides changed the same lines apart."""
    out: list[str] = []
    for group in merge3.Merge3(_lines(base), _lines(mine), _lines(theirs)).merge_groups():
        if group[0] == "conflict":
            return None
        out.extend(group[1])
    return "".join(out).rstrip("\n")


def _lines(text: str) -> list[str]:
    return [line + "\n" for line in text.split("\n")]


def _text(value: Any, default: str) -> str:
    return " ".join(str(value).split()) if value not in (None, "") else default
