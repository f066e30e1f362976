"""Reading an agent's transcript file (Claude Code's JSON Lines) safely and in bounded pieces.

A hook names the transcript in its payload, so the path is hostile input: it must be a
regular `.jsonl` file (not a symlink, FIFO or device) whose real path lies inside one of the
places the caller allows (`~/.claude/projects`), and it is read from a byte offset, at most
`MAX_READ` bytes a call, whole lines only. A transcript first seen when it is already larger
than that is read from its last `MAX_READ` bytes (what came before is said to be skipped), so
a 1 GB file costs what an 8 MB one does. Lines longer than `MAX_LINE` (a tool's huge output)
are skipped unread, and a turn's text is cut to `MAX_TEXT` characters.

Claude Code writes one JSON object per line: `type` user / assistant / system / summary...,
`uuid`, `timestamp`, `sessionId` and `message` {role, content}, content a string or blocks
(text, thinking, tool_use, tool_result, image). A turn is the text a person typed or the text
the assistant answered; tool calls, tool results, thinking and compaction summaries are not
turns (they are long, repeat the files, and are where secrets leak).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.errors import InvalidInputError

MAX_READ = 8 * 1024 * 1024  # bytes read from a transcript per call
MAX_LINE = 2 * 1024 * 1024  # a longer line is skipped (it is a tool's output, not a turn)
MAX_TEXT = 8000  # characters of one turn kept (the rest is said to be left out)
MAX_PATH = 4096
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO must not hang the hook
_COMMAND_TAGS = ("<command-name>", "<command-message>", "<local-command-stdout>")


@dataclass(frozen=True)
class Turn:
    """One message of a conversation: its id, who spoke, what, and when (ISO 8601)."""

    id: str
    role: str
    text: str
    ts: str | None


@dataclass(frozen=True)
class Piece:
    """What one read found: the turns, where the next read starts, and what it passed over."""

    turns: tuple[Turn, ...]
    end: int  # offset after the last whole line read
    skipped_bytes: int = 0  # bytes before `start` never read (a transcript first seen large)
    long_lines: int = 0  # lines over MAX_LINE, skipped
    bad_lines: int = 0  # lines that are not JSON objects


@dataclass(frozen=True)
class Opened:
    """An open transcript: its descriptor, real path, identity and size."""

    fd: int
    real: Path
    dev: int
    ino: int
    size: int


def open_transcript(path: str, places: Iterable[Path]) -> Opened:
    """Open a transcript for reading after every check; InvalidInputError says which failed."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH or "\x00" in path:
        raise InvalidInputError("transcript_path is missing or not a path")
    given = Path(path)
    if not given.is_absolute() or given.suffix != ".jsonl":
        raise InvalidInputError("transcript_path must be an absolute path to a .jsonl file")
    real = Path(os.path.realpath(given))
    roots = [Path(os.path.realpath(p)) for p in places]
    if not any(real.is_relative_to(root) and real != root for root in roots):
        allowed = ", ".join(str(p) for p in places) or "none"
        raise InvalidInputError(f"transcript {path} is outside the allowed places ({allowed})")
    try:
        fd = os.open(given, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InvalidInputError(f"transcript {path} does not exist") from None
    except OSError as exc:  # ELOOP: the file is a symlink
        raise InvalidInputError(f"transcript {path} cannot be opened: {exc.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != _identity(real):
        os.close(fd)
        raise InvalidInputError(f"transcript {path} is not a regular file in its place")
    return Opened(fd, real, st.st_dev, st.st_ino, st.st_size)


def _identity(path: Path) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_dev, st.st_ino)


def read_from(opened: Opened, offset: int | None) -> Piece:
    """The turns in whole lines from `offset` (None: never read before) on, at most MAX_READ
    bytes; an offset past the end (the file was replaced or cut) starts again at 0."""
    size = opened.size
    skipped = 0
    if offset is None or offset > size:
        offset = 0
        if size > MAX_READ:  # first sight of a long transcript: its recent part only
            offset = _next_line(opened.fd, size - MAX_READ)
            skipped = offset
    data = os.pread(opened.fd, min(MAX_READ, size - offset), offset)
    cut = data.rfind(b"\n")
    if cut < 0:
        # no whole line: a line over MAX_READ bytes is passed over, else wait for its end
        end = offset + len(data) if len(data) >= MAX_READ else offset
        return Piece((), end, skipped, 1 if end > offset else 0)
    turns: list[Turn] = []
    long_lines = bad = 0
    for line in data[: cut + 1].split(b"\n"):
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            long_lines += 1
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(obj, dict):
            bad += 1
            continue
        turns.extend(turns_of(obj))
    return Piece(tuple(turns), offset + cut + 1, skipped, long_lines, bad)


def _next_line(fd: int, offset: int) -> int:
    """The offset just after the first newline at or after `offset`."""
    while chunk := os.pread(fd, 64 * 1024, offset):
        at = chunk.find(b"\n")
        if at >= 0:
            return offset + at + 1
        offset += len(chunk)
    return offset


def turns_of(obj: dict[str, Any]) -> Iterator[Turn]:
    """The turn a transcript line holds, if it holds one."""
    kind, message = obj.get("type"), obj.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return
    if obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isSidechain"):
        return  # injected context, the compaction summary, a subagent's own conversation
    uid = obj.get("uuid")
    if not isinstance(uid, str) or not uid or len(uid) > 128:
        return
    text = _text(message.get("content"))
    if not text.strip() or text.lstrip().startswith(_COMMAND_TAGS):
        return  # nothing said, or a slash command and its local output (/clear, /model)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n[… {len(text) - MAX_TEXT:,} more characters left out]"
    ts = obj.get("timestamp")
    yield Turn(uid, kind, text, ts if isinstance(ts, str) and len(ts) <= 40 else None)


def _text(content: Any) -> str:
    """The text of a message's content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content[:1000]
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n\n".join(parts)
