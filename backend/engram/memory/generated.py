"""A note Engram writes only part of (a daily note, a weekly reflection): a section between two
marker lines and the frontmatter keys it owns; whatever a person wrote around them is kept."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engram.errors import InvalidInputError
from engram.memory import props


@dataclass(frozen=True)
class Markers:
    """The lines around the generated section, and what the note is called in errors."""

    start: str
    end: str
    noun: str  # "daily note", "reflection"


def merge(
    existing: str | None, section: str, owned: Mapping[str, object], title: str, m: Markers
) -> str:
    """The note's new text: a new note (`owned` keys, `# title`, the section), or `existing`
    with its generated section replaced (appended when it has none) and the owned keys set."""
    if existing is None:
        return f"---\n{props.dump(owned)}\n---\n# {title}\n\n{section}\n"
    start, end = existing.find(m.start), existing.find(m.end)
    if (start < 0) != (end < 0) or (start >= 0 and end < start):
        raise InvalidInputError(
            f"the {m.noun}'s engram markers are damaged; restore or delete both lines "
            f"{m.start} and {m.end}"
        )
    if start < 0:
        sep = "" if existing.endswith("\n\n") else ("\n" if existing.endswith("\n") else "\n\n")
        text = f"{existing}{sep}{section}\n"
    else:
        text = existing[:start] + section + existing[end + len(m.end) :]
    current, _ = props.read(text)
    if current is None:
        raise InvalidInputError(f"the {m.noun}'s frontmatter is not valid YAML; fix it first")
    return props.edit(text, props.differing(current, owned))
