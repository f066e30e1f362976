"""Bounded tool output: JSON or text that never exceeds a character budget, and says so when
something was left out (pure functions)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_MAX_CHARS = 20_000
MIN_STRING = 200  # long strings are never cut below this before whole items are dropped
ELLIPSIS = "…"


def dump(value: Any) -> str:
    """The JSON text agents read: compact (indentation costs tokens, not meaning), Unicode
    kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def fit_json(payload: Mapping[str, Any], max_chars: int, hint: str = "") -> str:
    """`payload` as JSON within `max_chars`: long strings are shortened first, then items are
    dropped from the end of the longest lists; a `truncated` key says what was cut."""
    payload = prune(payload)
    text = dump(payload)
    if len(text) <= max_chars:
        return text
    work: Any = dict(payload)
    clipped_to = None
    cap = _longest_string(payload)
    while len(text) > max_chars and cap > MIN_STRING:
        cap = max(cap // 2, MIN_STRING)
        work = _clip_strings(payload, cap)
        clipped_to = cap
        text = dump(_with_note(work, _note(clipped_to, {}, payload, hint)))
    dropped: dict[str, int] = {}
    while len(text) > max_chars:
        key = _longest_list(work)
        if key is None:
            break
        items = work[key]
        excess = len(text) - max_chars
        cut = max(1, min(len(items), len(items) * excess // max(len(text), 1) + 1))
        work = {**work, key: items[: len(items) - cut]}
        dropped[key] = dropped.get(key, 0) + cut
        text = dump(_with_note(work, _note(clipped_to, dropped, payload, hint)))
    if len(text) > max_chars:  # nothing left to drop: a hard cut, still within the budget
        return text[: max(max_chars - 80, 0)] + f"\n{ELLIPSIS} [cut at {max_chars} characters]"
    return text


def offset(cursor: str | None) -> int:
    """Where a page starts: the `nextCursor` a previous page gave (None: the start)."""
    if cursor is None:
        return 0
    if not cursor.isdigit():
        from engram.errors import InvalidInputError

        raise InvalidInputError(f"cursor {cursor!r} is not one this tool gave (use nextCursor)")
    return int(cursor)


def fit_page(
    payload: Mapping[str, Any],
    key: str,
    items: Sequence[Any],
    cursor: str | None,
    limit: int,
    max_chars: int,
) -> str:
    """`payload` with a page of `items` under `key`, their `total` and, when more follow, the
    `nextCursor` to ask for them: at most `limit` items, fewer when more would not fit
    `max_chars` (the cursor then starts at the first one left out)."""
    start, total = offset(cursor), len(items)

    def page(stop: int) -> dict[str, Any]:
        body = {**payload, key: list(items[start:stop]), "total": total}
        return {**body, "nextCursor": str(stop)} if stop < total else body

    low, high = min(start + 1, total), min(start + limit, total)
    if len(dump(prune(page(high)))) > max_chars:
        while low < high:  # the most items that fit, at least one
            mid = (low + high + 1) // 2
            if len(dump(prune(page(mid)))) <= max_chars:
                low = mid
            else:
                high = mid - 1
    return fit_json(page(high), max_chars)


def prune(value: Any) -> Any:
    """The value without null members (an agent reads absence as well, for fewer tokens)."""
    if isinstance(value, Mapping):
        return {k: prune(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [prune(v) for v in value]
    return value


def clip_text(text: str, max_chars: int, more: str = "") -> str:
    """Text within `max_chars`, cut at a line end when possible, with a note on the cut."""
    if len(text) <= max_chars:
        return text
    note = f"\n{ELLIPSIS} [truncated at {max_chars} characters{'; ' + more if more else ''}]"
    room = max(max_chars - len(note), 0)
    head = text[:room]
    cut = head.rfind("\n")
    return (head[:cut] if cut > room // 2 else head) + note


def render_document(doc: Mapping[str, Any], max_chars: int) -> str:
    """A document (as `codec.encode` writes it) as readable text within `max_chars`: a header,
    then its lines; a cut names the line to continue from."""
    start = int(doc.get("fromLine") or 1)
    body = str(doc.get("text") or "")
    total = int(doc.get("totalLines") or 0)
    empty = not body and (doc.get("note") or start > total)  # skipped, or past the end
    lines = [] if empty else body.split("\n")  # as the index counts lines
    total = total or len(lines)
    name = str(doc.get("uri") or doc.get("path")) if doc.get("docid") else str(doc.get("path"))
    head = [f"# {doc.get('title') or doc.get('path')}", name]
    if doc.get("docid"):
        span = f"lines {start}-{start + len(lines) - 1}" if lines else "no lines"
        head[-1] += f"  (#{doc['docid']}, {span} of {total})"
    for key in ("context", "note"):
        if doc.get(key):
            head.append(f"{key}: {doc[key]}")
    out = "\n".join(head) + "\n\n"
    shown = 0
    for line in lines:
        if len(out) + len(line) + 1 > max_chars - 160:
            break
        out += line + "\n"
        shown += 1
    if shown < len(lines):
        if shown == 0:  # one giant line: show its start
            out += clip_text(lines[0], max(max_chars - len(out) - 160, 0)) + "\n"
        nxt = start + max(shown, 1)
        out += (
            f"{ELLIPSIS} [truncated to stay within {max_chars} characters: showed lines "
            f"{start}-{nxt - 1} of {total}; call get with from={nxt} to read on]"
        )
    return clip_text(out.rstrip("\n"), max_chars)


def render_documents(docs: Sequence[Mapping[str, Any]], max_chars: int) -> str:
    """Several documents within one budget; those that do not fit are listed by path."""
    parts: list[str] = []
    used = 0
    left: list[str] = []
    for i, doc in enumerate(docs):
        room = max_chars - used - 400
        if room < 600:
            left = [str(d.get("uri") or d.get("path")) for d in docs[i:]]
            break
        part = render_document(doc, room)
        parts.append(part)
        used += len(part) + 8
    text = "\n\n---\n\n".join(parts)
    if left:
        names = ", ".join(left[:20]) + (f" and {len(left) - 20} more" if len(left) > 20 else "")
        text += (
            f"\n\n{ELLIPSIS} [{len(left)} more documents not shown to stay within "
            f"{max_chars} characters: {names}; fetch them with get or raise maxChars]"
        )
    return clip_text(text, max_chars)


def _note(
    clipped: int | None, dropped: dict[str, int], payload: Mapping[str, Any], hint: str
) -> str:
    parts = []
    for key, n in dropped.items():
        total = len(payload[key])
        parts.append(f"showing {total - n} of {total} {key}")
    if clipped:
        parts.append(f"long texts cut to {clipped} characters")
    return "; ".join(parts) + (
        f" to stay within maxChars. {hint}" if hint else " to stay within maxChars."
    )


def _with_note(work: dict[str, Any], note: str) -> dict[str, Any]:
    return {"truncated": note, **work}


def _longest_string(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        return max((_longest_string(v) for v in value.values()), default=0)
    if isinstance(value, list | tuple):
        return max((_longest_string(v) for v in value), default=0)
    return 0


def _clip_strings(value: Any, cap: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= cap else value[:cap] + ELLIPSIS
    if isinstance(value, Mapping):
        return {k: _clip_strings(v, cap) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clip_strings(v, cap) for v in value]
    return value


def _longest_list(work: Mapping[str, Any]) -> str | None:
    sizes = {k: len(dump(v)) for k, v in work.items() if isinstance(v, list) and v}
    return max(sizes, key=lambda k: sizes[k]) if sizes else None
