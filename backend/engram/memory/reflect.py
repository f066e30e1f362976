"""Weekly reflections: `ledger/reflections/YYYY-Www.md` (ISO week, UTC).

A reflection gathers a week: its structural facts by type, decisions, open commitments,
superseded and contradicted facts, the most recalled facts, what each agent did, and links
to the week's daily notes. As in daily notes, Engram owns only the part between two markers
and its own properties; the rest of the note is the person's, kept byte for byte, and the
same facts give the same bytes (nothing is written).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engram.errors import InvalidInputError
from engram.memory import generated as generated_note
from engram.memory import props
from engram.memory.daily import type_label
from engram.memory.model import LEDGER_FOLDER, STRUCTURAL

START = "<!-- engram:reflection:start -->"
END = "<!-- engram:reflection:end -->"
MARKERS = generated_note.Markers(START, END, "reflection")
REFLECTIONS = "reflections"
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
TOP_RECALLED = 5


@dataclass(frozen=True)
class Week:
    """An ISO week (Monday to Sunday, UTC)."""

    year: int
    week: int

    @property
    def label(self) -> str:
        """`2026-W10`."""
        return f"{self.year}-W{self.week:02d}"

    @property
    def start(self) -> dt.date:
        """Its Monday."""
        return dt.date.fromisocalendar(self.year, self.week, 1)

    @property
    def end(self) -> dt.date:
        """The Monday after it (exclusive end)."""
        return self.start + dt.timedelta(days=7)

    def days(self) -> list[dt.date]:
        """Its seven days."""
        return [self.start + dt.timedelta(days=i) for i in range(7)]


def week_of(day: dt.date) -> Week:
    """The ISO week a day is in."""
    iso = day.isocalendar()
    return Week(iso.year, iso.week)


def parse_week(text: str) -> Week:
    """`2026-W10` as a Week (InvalidInputError when it is not one)."""
    m = _WEEK.fullmatch(text.strip())
    if m is None:
        raise InvalidInputError(f"{text!r} is not an ISO week", "write it like 2026-W10")
    try:
        week = Week(int(m.group(1)), int(m.group(2)))
        week.start  # noqa: B018 - validates the week number for that year
    except ValueError:
        raise InvalidInputError(f"{text!r}: that year has no such week") from None
    return week


def reflection_path(facts_root: str, week: Week) -> str:
    """Vault-relative path of a week's reflection."""
    return f"{facts_root}/{LEDGER_FOLDER}/{REFLECTIONS}/{week.label}.md"


@dataclass(frozen=True)
class Item:
    """A fact as a reflection lists it."""

    id: str
    title: str
    fact_type: str
    importance: float
    link_target: str  # vault path without .md
    created_by: str
    lifecycle: str = "active"
    superseded_by: str | None = None
    contradicts: int = 0  # how many facts it contradicts


@dataclass(frozen=True)
class WeekFacts:
    """What a reflection is made from."""

    week: Week
    facts: Sequence[Item]  # recorded that week
    commitments: Sequence[Item]  # live commitments recorded up to the week's end
    recalled: Sequence[tuple[Item, int]]  # most recalled facts, times recalled
    recalls: Mapping[str, int]  # recalls per agent that week
    raw_lines: Mapping[str, int]  # transcript lines per agent that week
    days: Sequence[tuple[dt.date, str]]  # the week's daily notes (day, link target)


def _link(item: Item) -> str:
    title = " ".join(item.title.replace("|", "/").replace("[", "(").replace("]", ")").split())
    return f"[[{item.link_target}|{title}]]"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def generated(w: WeekFacts) -> str:
    """The generated section, markers included."""
    facts = sorted(w.facts, key=lambda f: (type_label(f.fact_type), -f.importance, f.id))
    counts = Counter(type_label(f.fact_type).lower() for f in facts)
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    lines = [START, f"**{_plural(len(facts), 'fact')}**" + (f": {summary}" if summary else "")]

    def section(title: str, rows: list[str]) -> None:
        lines.extend(["", f"## {title}", *(rows or ["- none"])])

    structural = [f for f in facts if f.importance >= STRUCTURAL]
    rows = []
    for kind in dict.fromkeys(f.fact_type for f in structural):
        rows.append(f"- **{type_label(kind)}**")
        rows += [f"  - {_link(f)} ({f.importance:.2f})" for f in structural if f.fact_type == kind]
    section("Structural facts", rows)
    section("Decisions", [f"- {_link(f)}" for f in facts if f.fact_type == "decision"])
    open_items = sorted(w.commitments, key=lambda f: (-f.importance, f.id))
    section("Open commitments", [f"- {_link(f)} ({f.importance:.2f})" for f in open_items])
    changed = []
    for f in facts:
        if f.superseded_by or f.lifecycle == "merged":
            changed.append(f"- {_link(f)} — superseded")
        if f.contradicts:
            changed.append(f"- {_link(f)} — contradicts {_plural(f.contradicts, 'fact')}")
    section("Superseded and contradicted", changed)
    section(
        "Most recalled",
        [f"- {_link(f)} — recalled {_plural(n, 'time')}" for f, n in w.recalled[:TOP_RECALLED]],
    )
    stored = Counter(f.created_by for f in facts)
    agents = sorted(set(stored) | {a for a, n in w.recalls.items() if n} | set(w.raw_lines))
    rows = []
    for agent in agents:
        parts = [
            _plural(stored.get(agent, 0), "fact") + " stored",
            _plural(w.recalls.get(agent, 0), "recall"),
            _plural(w.raw_lines.get(agent, 0), "transcript line"),
        ]
        rows.append(f"- {agent}: {', '.join(parts)}")
    section("Agent activity", rows)
    section("Days", [f"- [[{target}|{day:%a %Y-%m-%d}]]" for day, target in w.days])
    lines.append(END)
    return "\n".join(lines)


def summary_props(w: WeekFacts) -> dict[str, object]:
    """The frontmatter keys Engram owns in a reflection."""
    agents = {f.created_by for f in w.facts} | {a for a, n in w.recalls.items() if n}
    return {
        "week": w.week.label,
        "weekStart": w.week.start,
        "weekEnd": w.week.end - dt.timedelta(days=1),
        "factsCount": len(w.facts),
        "agents": sorted(agents | set(w.raw_lines)),
    }


def merge(existing: str | None, w: WeekFacts) -> str:
    """The reflection's new text: the generated section replaced (or appended), the rest
    kept as it is."""
    return generated_note.merge(
        existing, generated(w), summary_props(w), f"Week {w.week.label}", MARKERS
    )


def readable(text: str) -> str:
    """A reflection's generated part without markers (for wake and context)."""
    start, end = text.find(START), text.find(END)
    body = text[start + len(START) : end] if 0 <= start < end else props.read(text)[1]
    return body.strip()


def latest_readable(root: Path, facts_root: str) -> tuple[str, str, str] | None:
    """(week, vault path, readable text) of the newest reflection, if any."""
    rel = latest(root, facts_root)
    if rel is None:
        return None
    try:
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return rel.rsplit("/", 1)[-1].removesuffix(".md"), rel, readable(text)


def latest(root: Path, facts_root: str) -> str | None:
    """The vault-relative path of the newest reflection, if any."""
    folder = root / facts_root / LEDGER_FOLDER / REFLECTIONS
    try:
        names = sorted(p.name for p in folder.iterdir() if _WEEK.fullmatch(p.stem))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return f"{facts_root}/{LEDGER_FOLDER}/{REFLECTIONS}/{names[-1]}" if names else None
