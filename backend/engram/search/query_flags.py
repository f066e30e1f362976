"""Filters given as command-line flags, written in the inline query syntax.

`--path P --tag T --where k:v --after D --before D --memory` become `path:"P" tag:"T" k:"v"
after:D before:D kind:all`, which `parse_query` reads into exactly the filters the same words
typed in the query give. One textual form also travels unchanged to the daemon (`engram
serve`) and in-process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engram.errors import InvalidInputError
from engram.search.query import QueryError, parse_date

_KEY = re.compile(r"^[A-Za-z_][\w.-]*$")


def filter_syntax(
    paths: Sequence[str] = (),
    tags: Sequence[str] = (),
    where: Sequence[str] = (),
    after: str | None = None,
    before: str | None = None,
    memory: bool = False,
) -> str:
    """Inline query syntax for flag filters; `where` items are `key:value` (frontmatter or
    inline fields, e.g. `type:decision`); `memory`: Engram's memory too (`kind:all`).
    InvalidInputError names the flag that is wrong."""
    parts = ["kind:all"] if memory else []
    parts += [_quoted("path", p, "--path") for p in paths]
    parts += [_quoted("tag", t.lstrip("#"), "--tag") for t in tags]
    for item in where:
        key, sep, value = item.partition(":")
        if not sep or not _KEY.match(key.strip()) or not value.strip():
            raise InvalidInputError(
                f"--where expects KEY:VALUE such as type:decision or status:active, got {item!r}"
            )
        parts.append(_quoted(key.strip(), value.strip(), "--where"))
    for name, date in (("after", after), ("before", before)):
        if date is not None:
            try:
                parts.append(f"{name}:{parse_date(date, '--' + name)}")
            except QueryError as exc:
                raise InvalidInputError(str(exc)) from None
    return " ".join(parts)


def _quoted(key: str, value: str, flag: str) -> str:
    if not value.strip():
        raise InvalidInputError(f"{flag} needs a value")
    if '"' in value:
        raise InvalidInputError(f"{flag} values cannot contain double quotes: {value!r}")
    return f'{key}:"{value}"'
