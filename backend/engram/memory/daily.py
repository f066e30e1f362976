"""Daily notes `daily/YYYY-MM-DD.md` (UTC): that day's facts, regenerated idempotently.

Engram writes only between two markers (HTML comments, invisible in Obsidian's reading
view) and its own frontmatter keys; a person's writing anywhere else in the note is kept
byte for byte. Regenerating with the same facts gives the same bytes, so nothing is written.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engram.memory import generated as generated_note
from engram.memory.model import DAILY_FOLDER, Fact

START = "<!-- engram:daily:start -->"
END = "<!-- engram:daily:end -->"
MARKERS = generated_note.Markers(START, END, "daily note")


@dataclass(frozen=True)
class DailyEntry:
    """What a daily note shows for one fact."""

    id: str
    title: str
    fact_type: str
    importance: float
    tier: str
    created_by: str
    timestamp: dt.datetime
    link_target: str  # vault path without .md
    lifecycle: str = "active"


def entry_for(fact: Fact) -> DailyEntry:
    """What the daily note shows for a fact."""
    return DailyEntry(
        fact.id,
        fact.title,
        fact.fact_type,
        fact.importance,
        fact.tier,
        fact.created_by,
        fact.timestamp,
        fact.path.removesuffix(".md"),
        fact.lifecycle,
    )


def day_bounds(day: dt.date) -> tuple[str, str]:
    """[start, end) of a UTC day as the ISO timestamps facts are stored with."""
    start = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    end = start + dt.timedelta(days=1)
    return start.strftime("%Y-%m-%dT%H:%M:%SZ"), end.strftime("%Y-%m-%dT%H:%M:%SZ")


def daily_path(facts_root: str, day: dt.date) -> str:
    """Vault-relative path of a day's note."""
    return f"{facts_root}/{DAILY_FOLDER}/{day.isoformat()}.md"


def type_label(fact_type: str) -> str:
    """`session_summary` -> `Session Summary`."""
    return " ".join(w.capitalize() for w in fact_type.replace("-", "_").split("_") if w)


def _display(title: str) -> str:
    return " ".join(title.replace("|", "/").replace("[", "(").replace("]", ")").split())


def activity(entries: Iterable[DailyEntry], recalls: Mapping[str, int]) -> list[str]:
    """The "Session activity" lines: per agent, facts stored and recalls made."""
    stored = Counter(e.created_by for e in entries)
    out = []
    for agent in sorted(set(stored) | {a for a, n in recalls.items() if n}):
        facts, asked = stored.get(agent, 0), recalls.get(agent, 0)
        parts = [f"{facts} fact{'' if facts == 1 else 's'} stored"] if facts else []
        parts += [f"{asked} recall{'' if asked == 1 else 's'}"] if asked else []
        out.append(f"- {_display(agent)}: {', '.join(parts)}")
    return out


def generated(entries: Iterable[DailyEntry], recalls: Mapping[str, int] | None = None) -> str:
    """The generated section (markers included): counts, one list per fact type, then what
    each agent did."""
    items = sorted(entries, key=lambda e: (type_label(e.fact_type), e.timestamp, e.id))
    by_type: dict[str, list[DailyEntry]] = {}
    for e in items:
        by_type.setdefault(e.fact_type, []).append(e)
    counts = ", ".join(f"{len(v)} {type_label(k).lower()}" for k, v in by_type.items())
    lines = [START, f"**{len(items)} facts**" + (f": {counts}" if counts else "")]
    for kind, group in by_type.items():
        lines += ["", f"## {type_label(kind)} ({len(group)})"]
        for e in group:
            state = "" if e.lifecycle == "active" else f", {e.lifecycle}"
            lines.append(
                f"- {e.timestamp:%H:%M} [[{e.link_target}|{_display(e.title)}]]"
                f" — importance {e.importance:.2f} ({e.tier}{state}), by {e.created_by}"
            )
    if who := activity(items, recalls or {}):
        lines += ["", "## Session activity", *who]
    lines.append(END)
    return "\n".join(lines)


def summary_props(
    entries: list[DailyEntry], day: dt.date, recalls: Mapping[str, int] | None = None
) -> dict[str, object]:
    """The frontmatter keys Engram owns in a daily note."""
    agents = {e.created_by for e in entries} | {a for a, n in (recalls or {}).items() if n}
    return {
        "date": day,
        "factsCount": len(entries),
        "factTypes": sorted({e.fact_type for e in entries}),
        "agents": sorted(agents),
    }


def readable(body: str) -> str:
    """A daily note's body without Engram's marker lines (for context text)."""
    lines = [ln for ln in body.splitlines() if ln.strip() not in (START, END)]
    return "\n".join(lines).strip()


def merge(
    existing: str | None,
    entries: list[DailyEntry],
    day: dt.date,
    recalls: Mapping[str, int] | None = None,
) -> str:
    """The note's new text: the generated section replaced (or appended), human text kept;
    `recalls` is the number of recalls per agent that day."""
    owned = summary_props(entries, day, recalls)
    return generated_note.merge(
        existing, generated(entries, recalls), owned, day.isoformat(), MARKERS
    )
