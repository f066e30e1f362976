"""The raw transcript ledger: `ledger/raw/<agent>/YYYY/MM/DD.jsonl`, one JSON object per line.

An append-only log per agent and UTC day of what an agent sends (role, text, timestamp and any
small extra fields). Lines are appended, never rewritten: each is one `write` of a whole line
to a file opened with O_APPEND, under the same `flock` the atomic writer takes on a file
(`vault.atomic`), then fsynced, so two processes appending at once interleave whole lines. A
batch is validated in full before the first line is written: a bad line is refused with its
number and nothing is appended. A line with an `id` (a string) is appended once: one whose `id`
its day file already holds is skipped, checked under the lock, so an agent or a hook that sends
the same message twice (a retry, a hook fired twice) leaves one line. The scanner indexes `.md`
notes only, so these files are never notes (`raw_files` is how Engram lists them).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from engram.codec import arg
from engram.errors import ConflictError, InvalidInputError
from engram.memory.model import LEDGER_FOLDER
from engram.vault.atomic import fsync_dir
from engram.vault.fsio import safe_join

try:  # POSIX; elsewhere appends still go out as single writes, without the lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

RAW_FOLDER = "raw"
MAX_LINE_BYTES = 64 * 1024  # one stored line, JSON encoded
MAX_LINES = 1000  # one append
MAX_ROLE = 64
MAX_KEYS = 32
_AGENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class RawEntry:
    """One line of a raw ledger: who spoke, what, when, and extra fields kept as given."""

    role: str
    text: str
    ts: dt.datetime
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class RawLine:
    """A stored line and where it is: vault-relative file and 1-based line number."""

    path: str
    number: int
    entry: RawEntry


@dataclass(frozen=True)
class Placed:
    """Where an appended line went: vault-relative file and 1-based line number."""

    path: str
    number: int = arg(wire="line")


@dataclass(frozen=True)
class AppendResult:
    """What an append wrote: the lines added per file, and how many had an `id` there already.

    Those are left out, not appended again."""

    agent: str
    lines: tuple[Placed, ...]
    skipped: int = 0

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"appended": "appended"}

    @property
    def appended(self) -> int:
        """How many lines were appended."""
        return len(self.lines)


def check_agent(name: str) -> str:
    """An agent name safe as one path component (letters, digits, `_ . -`, ≤ 64)."""
    if not isinstance(name, str) or not _AGENT.fullmatch(name) or name.strip(".") == "":
        raise InvalidInputError(
            f"agent name {name!r} is not allowed",
            "use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
        )
    return name


def raw_path(facts_root: str, agent: str, day: dt.date) -> str:
    """Vault-relative path of an agent's raw ledger for a UTC day."""
    return f"{facts_root}/{LEDGER_FOLDER}/{RAW_FOLDER}/{check_agent(agent)}/{day:%Y/%m/%d}.jsonl"


def parse_ts(value: Any) -> dt.datetime:
    """An ISO 8601 timestamp as an aware UTC datetime (naive means UTC)."""
    if not isinstance(value, str) or len(value) > 40:
        raise ValueError("'ts' must be an ISO 8601 timestamp string")
    moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def entry_from(obj: Any, now: dt.datetime) -> RawEntry:
    """A RawEntry from a decoded JSON object (ValueError says what is wrong)."""
    if not isinstance(obj, dict):
        raise ValueError("each line must be a JSON object")
    if len(obj) > MAX_KEYS:
        raise ValueError(f"at most {MAX_KEYS} fields per line")
    role, text = obj.get("role"), obj.get("text")
    if not isinstance(role, str) or not role.strip() or len(role) > MAX_ROLE:
        raise ValueError(f"'role' must be a non-empty string of at most {MAX_ROLE} characters")
    if not isinstance(text, str):
        raise ValueError("'text' must be a string")
    if "\x00" in text or "\x00" in role:
        raise ValueError("NUL characters are not allowed")
    ts = parse_ts(obj["ts"]) if obj.get("ts") is not None else now
    extra = {k: v for k, v in obj.items() if k not in ("ts", "role", "text")}
    return RawEntry(role.strip(), text, ts, extra)


def encode(entry: RawEntry) -> bytes:
    """One stored line (UTF-8 JSON + newline): `ts` to the millisecond first, then role and
    text, then the extra fields as given (the file format: written here, not by the codec,
    which has no such flattening); ValueError when it is too long."""
    stamp = entry.ts.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    extra = {k: v for k, v in entry.extra.items() if k not in ("ts", "role", "text")}
    line = {"ts": stamp, "role": entry.role, "text": entry.text} | extra
    data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    if len(data) > MAX_LINE_BYTES:
        raise ValueError(f"the line is {len(data):,} bytes; the limit is {MAX_LINE_BYTES:,}")
    return data


def parse_input(
    objects: Iterable[tuple[int, Any]], now: dt.datetime
) -> list[tuple[RawEntry, bytes]]:
    """Validate a whole batch (line number, decoded object); InvalidInputError names the
    first bad line and nothing is kept."""
    out: list[tuple[RawEntry, bytes]] = []
    for number, obj in objects:
        if len(out) >= MAX_LINES:
            raise InvalidInputError(f"at most {MAX_LINES} lines per append")
        try:
            entry = entry_from(obj, now)
            out.append((entry, encode(entry)))
        except (ValueError, TypeError, OverflowError) as exc:
            raise InvalidInputError(f"line {number}: {exc}; nothing was appended") from None
    return out


def decode_lines(text: str) -> Iterator[tuple[int, Any]]:
    """(line number, decoded JSON) for each non-blank line of JSON Lines input."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            raise InvalidInputError(f"line {number}: longer than {MAX_LINE_BYTES:,} characters")
        try:
            yield number, json.loads(line)
        except ValueError as exc:
            raise InvalidInputError(f"line {number}: not JSON ({exc.args[0]})") from None


def append(
    root: Path, facts_root: str, agent: str, entries: list[tuple[RawEntry, bytes]]
) -> AppendResult:
    """Append validated lines to the agent's day files (by each line's UTC day)."""
    check_agent(agent)
    by_file: dict[str, list[tuple[RawEntry, bytes]]] = {}
    for entry, data in entries:
        by_file.setdefault(raw_path(facts_root, agent, entry.ts.date()), []).append((entry, data))
    written, skipped = [], 0
    for rel, group in by_file.items():
        lines = [(_line_id(entry), data) for entry, data in group]
        numbers = _append_lines(safe_join(root, rel), lines)
        written += [Placed(rel, n) for n in numbers]
        skipped += len(group) - len(numbers)
    return AppendResult(agent, tuple(written), skipped)


def _line_id(entry: RawEntry) -> str | None:
    value = entry.extra.get("id")
    return value if isinstance(value, str) and value else None


def _append_lines(path: Path, lines: list[tuple[str | None, bytes]]) -> list[int]:
    """Write whole lines at the end of `path` under its lock, leaving out those whose id the
    file (or an earlier line of the batch) holds; the line numbers written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConflictError(f"{path.name} is not a regular file; nothing was appended")
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the lock vault.atomic's writers take
        wanted = any(line_id for line_id, _ in lines)
        count, last, seen = _scan(fd, wanted)
        if last not in (None, b"\n"):  # a writer died mid-line: the next starts on its own
            os.write(fd, b"\n")
            count += 1
        numbers = []
        for line_id, data in lines:
            if line_id is not None:
                if line_id in seen:
                    continue
                seen.add(line_id)
            os.write(fd, data)  # one write of a whole line, O_APPEND: never interleaved
            count += 1
            numbers.append(count)
        os.fsync(fd)
    finally:
        os.close(fd)  # releases the lock
    if created:
        fsync_dir(path.parent)
    return numbers


def _scan(fd: int, ids: bool) -> tuple[int, bytes | None, set[str]]:
    """Newlines in the file, its last byte (None when empty) and, when `ids`, the ids its
    lines hold, read through `fd`."""
    count, last, offset = 0, None, 0
    seen: set[str] = set()
    rest = b""
    while chunk := os.pread(fd, 1 << 20, offset):
        count += chunk.count(b"\n")
        last, offset = chunk[-1:], offset + len(chunk)
        if ids:
            *whole, rest = (rest + chunk).split(b"\n")
            seen.update(i for line in whole if (i := _id_in(line)) is not None)
            rest = rest if len(rest) <= MAX_LINE_BYTES else b""  # no line of ours is longer
    if ids and rest:
        seen.update(i for i in (_id_in(rest),) if i is not None)
    return count, last, seen


def _id_in(line: bytes) -> str | None:
    if b'"id"' not in line:
        return None
    try:
        value = json.loads(line).get("id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def read(
    root: Path, rel: str, max_bytes: int = 256 * 1024 * 1024
) -> tuple[list[RawLine], list[tuple[int, str]]]:
    """A raw ledger's lines and its unreadable ones (number, why); absent file = empty."""
    try:
        data = safe_join(root, rel).read_bytes()[:max_bytes]
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return [], []
    good, bad = [], []
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            good.append(RawLine(rel, number, entry_from(json.loads(raw), epoch)))
        except (ValueError, TypeError) as exc:
            bad.append((number, str(exc)[:200]))
    return good, bad


def agents(root: Path, facts_root: str) -> list[str]:
    """The agents with a raw ledger folder, by name."""
    folder = safe_join(root, f"{facts_root}/{LEDGER_FOLDER}/{RAW_FOLDER}")
    try:
        names = [p.name for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in names if _AGENT.fullmatch(n))


def day_files(
    root: Path, facts_root: str, day: dt.date, agent: str | None = None
) -> list[tuple[str, str]]:
    """(agent, vault-relative path) of the existing raw ledgers of a day."""
    names = [check_agent(agent)] if agent else agents(root, facts_root)
    out = []
    for name in names:
        rel = raw_path(facts_root, name, day)
        if safe_join(root, rel).is_file():
            out.append((name, rel))
    return out


def now_utc(clock: Callable[[], dt.datetime]) -> dt.datetime:
    """`clock()` as an aware UTC datetime."""
    moment = clock()
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
