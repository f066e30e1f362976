"""Checking what callers pass in (types, scores, tags, tiers) and linking mentions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from engram.errors import InvalidInputError
from engram.graph.autolink import AutoLinker
from engram.memory import format as fmt
from engram.memory.model import FACT_TYPES, POTENTIAL, STRUCTURAL


def check_type(value: str) -> str:
    """A known factType (canonical form) or InvalidInputError listing them."""
    kind = fmt.fact_type(value)
    if kind not in FACT_TYPES:
        raise InvalidInputError(f"unknown fact type {value!r}; use one of: {', '.join(FACT_TYPES)}")
    return kind


def check_unit(value: float | None, what: str, default: float) -> float:
    """A 0..1 score (the default when None), or InvalidInputError."""
    if value is None:
        return default
    number = float(value)
    if not 0 <= number <= 1:
        raise InvalidInputError(f"{what} must be between 0 and 1, got {value}")
    return number


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags without '#', split on commas and spaces, de-duplicated with case ignored (as
    Obsidian does: `#Pricing` and `#pricing` are one tag), the first spelling kept."""
    out = [t.strip().lstrip("#") for tag in tags for t in tag.replace(",", " ").split()]
    first: dict[str, str] = {}
    for t in out:
        if t:
            first.setdefault(t.lower(), t)
    return tuple(first.values())


def clean_names(names: Iterable[str]) -> tuple[str, ...]:
    """Entity names without [[ ]], split on commas, de-duplicated."""
    out = [fmt.link_name(n) for name in names for n in fmt.str_list(name)]
    return tuple(dict.fromkeys(n for n in out if n))


def plus(items: tuple[str, ...], *more: str) -> tuple[str, ...]:
    """`items` with `more` appended, each once."""
    return tuple(dict.fromkeys([*items, *more]))


def tier_bounds(name: str | None) -> tuple[float | None, float | None]:
    """Importance range [low, high) of a tier name; InvalidInputError for an unknown one."""
    bounds: dict[str | None, tuple[float | None, float | None]] = {
        None: (None, None),
        "structural": (STRUCTURAL, None),
        "potential": (POTENTIAL, STRUCTURAL),
        "contextual": (None, POTENTIAL),
    }
    if name not in bounds:
        raise InvalidInputError(f"unknown tier {name!r}; use structural, potential or contextual")
    return bounds[name]


def linker(
    notes: Iterable[Any], entities: Iterable[str], skip_prefixes: tuple[str, ...]
) -> AutoLinker:
    """An auto-linker for a vault's notes (rows with path and aliases JSON) and entities.

    A note is linked by its file name when that name is unique in the vault, else by its
    path; notes under `skip_prefixes` (facts, daily notes, templates) are not link targets.
    Built linkers are cached by what they were built from (building one costs far more
    than checking).
    """
    rows = tuple(
        (str(r["path"]), str(r["aliases"] or "[]"))
        for r in notes
        if not str(r["path"]).startswith(skip_prefixes)
    )
    return _linker(rows, tuple(sorted(set(entities))))


@lru_cache(maxsize=4)
def _linker(rows: tuple[tuple[str, str], ...], entities: tuple[str, ...]) -> AutoLinker:
    stems: dict[str, int] = {}
    for path, _ in rows:
        stem = PurePosixPath(path).stem.lower()
        stems[stem] = stems.get(stem, 0) + 1
    targets = []
    for path, aliases in rows:
        stem = PurePosixPath(path).stem
        target = stem if stems[stem.lower()] == 1 else path.removesuffix(".md")
        targets.append((target, fmt.str_list(_json_list(aliases))))
    return AutoLinker.for_vault(targets, entities)


def _json_list(raw: Any) -> list[Any]:
    try:
        value = json.loads(raw or "[]")
    except ValueError:
        return []
    return value if isinstance(value, list) else []
