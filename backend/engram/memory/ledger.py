"""The ledger of scored observations: `ledger/observations/YYYY/MM/DD.md` (UTC).

One observation per line, `- [type|c=0.90|i=0.85] text`, optionally ending with a block id
`^fact-1a2b3c4d` that ties the line to the fact it came from. Engram appends a line for each
fact it stores; people and agents may add lines by hand. Lines are read back by `wake`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass

from engram.memory.model import LEDGER_FOLDER, tier

_LINE = re.compile(
    r"^[ \t]*[-*+][ \t]+\[(?P<type>[A-Za-z][\w-]*)\|c=(?P<c>\d*\.?\d+)\|i=(?P<i>\d*\.?\d+)\]"
    r"[ \t]+(?P<text>.*?)(?:[ \t]+\(raw (?P<raw>[^()\s]+)\))?"
    r"(?:[ \t]+\^(?:fact-(?P<ref>[0-9A-Za-z]+)|raw-(?P<rawid>[0-9a-f]+)))?[ \t]*$"
)
MAX_TEXT = 400


@dataclass(frozen=True)
class Observation:
    """One ledger line."""

    fact_type: str
    confidence: float
    importance: float
    text: str
    fact_ref: str | None = None  # first 8 characters of the fact id
    raw: str | None = None  # `agent/YYYY/MM/DD.jsonl:N`: the raw ledger line it was scored from
    day: dt.date | None = None
    line: int = 0

    @property
    def tier(self) -> str:
        """structural / potential / contextual."""
        return tier(self.importance)


def ledger_path(facts_root: str, day: dt.date) -> str:
    """Vault-relative path of a day's observations."""
    return f"{facts_root}/{LEDGER_FOLDER}/observations/{day:%Y/%m/%d}.md"


def one_line(text: str) -> str:
    """Text squeezed onto one line and kept short."""
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_TEXT else flat[: MAX_TEXT - 1].rsplit(" ", 1)[0] + "…"


def format_line(obs: Observation) -> str:
    """`- [type|c=0.90|i=0.85] text ^fact-1a2b3c4d`."""
    ref = f" ^fact-{obs.fact_ref}" if obs.fact_ref else ""
    if obs.raw and not obs.fact_ref:
        ref = f" (raw {obs.raw}) ^raw-{raw_block(obs.raw)}"
    return (
        f"- [{obs.fact_type}|c={obs.confidence:.2f}|i={obs.importance:.2f}] "
        f"{one_line(obs.text)}{ref}"
    )


def raw_block(raw: str) -> str:
    """The block id of an observation scored from raw line `raw` (stable, 10 hex)."""
    return hashlib.sha256(raw.encode()).hexdigest()[:10]


def parse_line(line: str, day: dt.date | None = None, number: int = 0) -> Observation | None:
    """An Observation from a ledger line, or None when the line is not one."""
    m = _LINE.match(line)
    if m is None or not m.group("text").strip():
        return None
    return Observation(
        fact_type=m.group("type").lower().replace("-", "_"),
        confidence=min(1.0, float(m.group("c"))),
        importance=min(1.0, float(m.group("i"))),
        text=m.group("text").strip(),
        fact_ref=m.group("ref"),
        raw=m.group("raw"),
        day=day,
        line=number,
    )


def parse(text: str, day: dt.date | None = None) -> list[Observation]:
    """Every observation line of a ledger file, in order."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        obs = parse_line(line, day, number)
        if obs is not None:
            out.append(obs)
    return out


def merge(existing: str | None, obs: Observation, day: dt.date) -> str:
    """The file with `obs` added, replacing the line of the same fact if there is one."""
    line = format_line(obs)
    if existing is None:
        return f"# Observations {day.isoformat()}\n\n{line}\n"
    lines = existing.split("\n")
    if obs.fact_ref:
        for i, old in enumerate(lines):
            parsed = parse_line(old)
            if parsed is not None and parsed.fact_ref == obs.fact_ref:
                lines[i] = line
                return "\n".join(lines)
    body = existing if existing.endswith("\n") or not existing else existing + "\n"
    return f"{body}{line}\n"
