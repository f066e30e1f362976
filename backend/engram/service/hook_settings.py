"""Writing Engram's hook entries into Claude Code's settings, and taking them out again.

Claude Code reads hooks from `settings.json` (the user's `~/.claude/`, or a project's
`.claude/`, `settings.local.json` for one person): `{"hooks": {EVENT: [{"matcher"?,
"hooks": [{"type": "command", "command", "timeout"?}]}]}}`. The file belongs to the person
and to other tools, so:

- only entries whose command runs `engram ... hook claude-code` are Engram's; every other
  hook, matcher group, event and setting is kept as it is, in its order;
- a file that is not a JSON object, or whose `hooks` is not shaped as above, is refused,
  never rewritten;
- the write is atomic (a temporary file in the same folder, renamed over the old one with
  the hash read first re-checked: a change made meanwhile is a conflict, not overwritten),
  keeps the file's mode and indentation, goes through a symlink to the file it names, and
  does not happen when nothing would change;
- a dry run gives the unified diff and writes nothing.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.errors import InvalidInputError
from engram.vault.atomic import write_file
from engram.vault.fsio import sha256_hex

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
TIMEOUT = 30  # seconds Claude Code gives the hook (it finishes well within; see docs/hooks.md)
MAX_SETTINGS = 4 * 1024 * 1024
_OURS = re.compile(r"(?:^|[/\\\s'\"])engram(?:\.exe)?['\"]?\s.*\bhook\s+claude-code\b")


@dataclass(frozen=True)
class SettingsChange:
    """A settings file before and after: the unified diff, and whether it was written."""

    path: str
    diff: str
    changed: bool
    written: bool


def is_ours(hook: Any) -> bool:
    """True for a hook entry that runs Engram's Claude Code hook."""
    return (
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
        and _OURS.search(hook["command"]) is not None
    )


def with_hooks(settings: dict[str, Any], command: str) -> dict[str, Any]:
    """`settings` with Engram's hook on every event of EVENTS (an identical entry already
    there is kept where it is; another of Engram's is replaced)."""
    out = without_hooks(settings, keep=command)
    hooks = out.setdefault("hooks", {})
    entry = {"type": "command", "command": command, "timeout": TIMEOUT}
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not any(h == entry for g in groups for h in g.get("hooks", [])):
            groups.append({"hooks": [entry]})
    return out


def without_hooks(settings: dict[str, Any], keep: str | None = None) -> dict[str, Any]:
    """`settings` without Engram's hook entries (but one running exactly `keep` with the
    usual timeout); a matcher group or event left empty by that goes too."""
    check(settings)
    out = json.loads(json.dumps(settings))  # a deep copy that keeps key order
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    wanted = {"type": "command", "command": keep, "timeout": TIMEOUT}
    for event in list(hooks):
        groups = hooks[event]
        kept_groups = []
        for group in groups:
            inner = group.get("hooks", [])
            kept = [h for h in inner if not is_ours(h) or (keep is not None and h == wanted)]
            if kept or not inner or len(kept) == len(inner):
                kept_groups.append({**group, "hooks": kept} if len(kept) != len(inner) else group)
        if kept_groups or not groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks and settings.get("hooks"):  # Engram's were the only hooks
        del out["hooks"]
    return out


def check(settings: Any) -> None:
    """Refuse settings whose shape Engram does not know (it would not edit them safely)."""
    if not isinstance(settings, dict):
        raise InvalidInputError("the settings file is not a JSON object; nothing was changed")
    hooks = settings.get("hooks")
    if hooks is None:
        return
    where = "the settings' hooks"
    if not isinstance(hooks, dict):
        raise InvalidInputError(f"{where} is not an object; nothing was changed")
    for event, groups in hooks.items():
        if not isinstance(groups, list) or not all(
            isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups
        ):
            raise InvalidInputError(
                f"{where}.{event} is not a list of {{matcher, hooks: [...]}} groups; "
                "nothing was changed"
            )


def edit(path: Path, command: str | None, dry_run: bool = False) -> SettingsChange:
    """Put Engram's hooks (running `command`) into the settings file at `path`, or take them
    out (`command` None); with `dry_run`, only say how."""
    target = Path(os.path.realpath(path))  # a symlinked settings file is written where it is
    old = _read(target)
    try:
        settings = json.loads(old) if old is not None and old.strip() else {}
    except ValueError as exc:
        raise InvalidInputError(
            f"{path} is not valid JSON ({exc}); fix it, or add the hooks by hand "
            "(docs/hooks.md); nothing was changed"
        ) from None
    new_settings = with_hooks(settings, command) if command else without_hooks(settings)
    if new_settings == settings and old is not None:
        return SettingsChange(str(path), "", False, False)
    new = json.dumps(new_settings, indent=_indent(old), ensure_ascii=False) + "\n"
    diff = "".join(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=str(path) if old is not None else "/dev/null",
            tofile=str(path),
        )
    )
    if dry_run:
        return SettingsChange(str(path), diff, True, False)
    expected = "" if old is None else sha256_hex(old.encode())
    write_file(target, new.encode(), expected)
    return SettingsChange(str(path), diff, True, True)


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InvalidInputError(f"{path} is a folder, not a settings file") from None
    if len(data) > MAX_SETTINGS:
        raise InvalidInputError(f"{path} is over {MAX_SETTINGS:,} bytes; nothing was changed")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path} is not UTF-8; nothing was changed") from None


def _indent(text: str | None) -> int | str:
    """The indentation the file uses (2 spaces for a new one)."""
    m = re.search(r"\n([ \t]+)\S", text or "")
    if m is None:
        return 2
    return "\t" if m.group(1).startswith("\t") else len(m.group(1))
