"""Facts as markdown notes: render a fact, read one back from whatever a person left."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from engram.memory import props
from engram.memory.model import (
    DEFAULT_TYPE,
    EDITORS,
    LIFECYCLE_STATES,
    Fact,
    normalize_text,
    title_from_text,
)

# The order keys are written in; a person's own keys keep their place and follow these.
KEY_ORDER = (
    "id",
    "title",
    "factType",
    "source",
    "createdBy",
    "scope",
    "timestamp",
    "updatedAt",
    "tags",
    "entities",
    "importanceScore",
    "confidence",
    "lifecycleState",
    "supersededBy",
    "supersedes",
    "contradictsWith",
    "convexId",
    "vaultSyncedAt",
    "lastEditedBy",
)
OPTIONAL_KEYS = frozenset({"supersedes"})  # written only when set
_LINK = re.compile(r"^\s*!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]\s*$")


def fact_props(fact: Fact) -> dict[str, Any]:
    """The frontmatter of a fact, in KEY_ORDER, with Dataview-friendly values."""
    values: dict[str, Any] = {
        "id": fact.id,
        "title": fact.title,
        "factType": fact.fact_type,
        "source": fact.source,
        "createdBy": fact.created_by,
        "scope": fact.scope,
        "timestamp": fact.timestamp,
        "updatedAt": fact.updated_at,
        "tags": list(fact.tags),
        "entities": [f"[[{e}]]" for e in fact.entities],
        "importanceScore": round(float(fact.importance), 4),
        "confidence": round(float(fact.confidence), 4),
        "lifecycleState": fact.lifecycle,
        "supersededBy": fact.superseded_by,
        "supersedes": fact.supersedes,
        "contradictsWith": list(fact.contradicts_with),
        "convexId": fact.convex_id,
        "vaultSyncedAt": fact.vault_synced_at,
        "lastEditedBy": fact.last_edited_by,
    }
    return {k: values[k] for k in KEY_ORDER if k not in OPTIONAL_KEYS or values[k] is not None}


def render(fact: Fact) -> str:
    """A new fact note: frontmatter, a blank line, the text."""
    return f"---\n{props.dump(fact_props(fact))}\n---\n\n{fact.text}\n"


def changes_for(fact: Fact, current: Mapping[str, Any]) -> dict[str, Any]:
    """The frontmatter keys whose value must change for the note to say `fact`."""
    out = props.differing(current, fact_props(fact))
    if fact.supersedes is None and "supersedes" in current:
        out["supersedes"] = props.DELETE
    return out


def with_body(text: str, body_text: str) -> str:
    """A note's text with its body replaced by `body_text` (frontmatter bytes kept)."""
    _, body = props.read(text)
    head = text[: len(text) - len(body)]
    return f"{head}\n{body_text}\n" if head else f"{body_text}\n"


def parse(text: str, path: str = "") -> Fact | None:
    """The fact a note holds; None when its frontmatter is broken or it has no id."""
    data, body = props.read(text)
    if data is None:
        return None
    fact = from_props(data, body, path)
    return fact if fact.id else None


def from_props(data: Mapping[str, Any], body: str, path: str = "") -> Fact:
    """A Fact from frontmatter values of any shape people write (missing fields defaulted)."""
    text = normalize_text(body)
    stem = PurePosixPath(path).stem if path else ""
    raw_title = data.get("title")
    title = " ".join(str(raw_title).split()) if _given(raw_title) else ""
    timestamp = to_time(data.get("timestamp") or data.get("created") or data.get("date"))
    return Fact(
        id=ref(data.get("id")) or "",
        title=title or stem or title_from_text(text),
        text=text,
        fact_type=fact_type(data.get("factType", data.get("type"))),
        timestamp=timestamp or dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        updated_at=to_time(data.get("updatedAt")),
        source=_text(data.get("source"), "human"),
        created_by=_text(data.get("createdBy"), "human"),
        scope=_text(data.get("scope", data.get("scopeId")), "default"),
        tags=tuple(t.lstrip("#") for t in str_list(data.get("tags")) if t.lstrip("#")),
        entities=tuple(
            dict.fromkeys(e for e in map(link_name, str_list(data.get("entities"))) if e)
        ),
        importance=unit(data.get("importanceScore", data.get("importance")), 0.5),
        confidence=unit(data.get("confidence"), 1.0),
        lifecycle=_choice(data.get("lifecycleState", data.get("lifecycle")), LIFECYCLE_STATES),
        superseded_by=ref(data.get("supersededBy")),
        supersedes=ref(data.get("supersedes")),
        contradicts_with=tuple(r for r in map(ref, str_list(data.get("contradictsWith"))) if r),
        convex_id=ref(data.get("convexId")),
        vault_synced_at=to_time(data.get("vaultSyncedAt")),
        last_edited_by=_choice(data.get("lastEditedBy"), ("human", *EDITORS)),
        path=path,
    )


def _given(value: Any) -> bool:
    return value is not None and not isinstance(value, dict | list) and str(value).strip() != ""


def _text(value: Any, default: str) -> str:
    return " ".join(str(value).split()) if _given(value) else default


def _choice(value: Any, allowed: tuple[str, ...]) -> str:
    text = str(value).strip().lower() if _given(value) else ""
    return text if text in allowed else allowed[0]


def fact_type(value: Any) -> str:
    """A factType as written (`Steering rule`, `session-summary`) in its canonical form."""
    if not _given(value):
        return DEFAULT_TYPE
    return re.sub(r"[\s-]+", "_", str(value).strip().lower()) or DEFAULT_TYPE


def unit(value: Any, default: float) -> float:
    """A 0..1 score from a number, "0.8" or "80%"; anything else is the default."""
    if isinstance(value, bool) or value is None:
        return default
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            return default
    elif isinstance(value, int | float):
        number = float(value)
    else:
        return default
    if number != number:  # NaN
        return default
    if 1 < number <= 100:
        number = number / 100  # "importanceScore: 85" means 85%
    return min(1.0, max(0.0, number))


def to_time(value: Any) -> dt.datetime | None:
    """A UTC datetime (to the second) from a YAML date/datetime, ISO text or epoch number."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if abs(value) > 1e11 else value
        try:
            moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    elif isinstance(value, str) and value.strip():
        try:
            moment = dt.datetime.fromisoformat(value.strip().replace(" ", "T", 1))
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).replace(microsecond=0)


def str_list(value: Any) -> list[str]:
    """A list property that may have been written as one string ("a, b") or a list."""
    if value is None:
        return []
    items = value if isinstance(value, list) else re.split(r",(?![^\[]*\]\])", str(value))
    return [str(v).strip() for v in items if v is not None and str(v).strip()]


def link_name(value: str) -> str:
    """`[[People/Ana|Ana]]` -> `People/Ana`; plain names pass through."""
    m = _LINK.match(value)
    return (m.group(1) if m else value).strip()


def ref(value: Any) -> str | None:
    """A fact reference: an id, or the id-bearing file name of a `[[link]]` to the fact."""
    if not _given(value):
        return None
    return link_name(str(value)) or None
