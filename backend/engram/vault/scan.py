"""Walk a collection's folder: glob masks, ignore rules, symlinks.

Symlinks are never followed: a file is indexed once, under its real path. A symlink whose
target is inside the collection is skipped quietly (the target is indexed where it is); one
whose target resolves outside the collection's root is skipped with a warning, as every read
and write refuses it (`fsio.safe_join`, the one vault boundary).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from .fsio import UnsafePathError, safe_join

# Obsidian hides every dot-folder (.obsidian, .trash, .git, a custom config folder); so do we.
ALWAYS_IGNORED_DIRS = frozenset({"node_modules", "__pycache__"})
NEVER_NOTES = (".jsonl",)  # transcript logs (the raw ledger), whatever the mask says


class FileStat(NamedTuple):
    """A file found by the scanner, with what incremental indexing compares (a named tuple:
    a scan makes one per file of the vault, every update)."""

    rel: str  # POSIX path relative to the collection root
    path: str  # where to read it, as the folder walk found it
    mtime_ns: int
    size: int


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob (`**`, `*`, `?`, `[abc]`, `{a,b}`) matched against a whole relative path."""
    return re.compile(_translate(pattern.strip().lstrip("/")) + r"\Z", re.IGNORECASE)


def _translate(pat: str) -> str:
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if pat.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(r".*")
            i += 2
        elif c == "*":
            out.append(r"[^/]*")
            i += 1
        elif c == "?":
            out.append(r"[^/]")
            i += 1
        elif c == "[":
            end = pat.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pat[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        elif c == "{":
            end = pat.find("}", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                alts = pat[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_translate(a) for a in alts) + ")")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def matches(pattern: str, rel: str) -> bool:
    """Does the relative POSIX path match the glob?"""
    return matcher(pattern)(rel)


@lru_cache(maxsize=256)
def matcher(pattern: str) -> Callable[[str], bool]:
    """The glob as a test of a relative POSIX path; `**/*.ext` (every collection's default)
    is a test of the name's ending, which a scan of 100,000 notes does in a fifth of the
    time the regular expression takes."""
    suffix = re.fullmatch(r"\*\*/\*(\.[\w-]+)", pattern.strip().lstrip("/"))
    if suffix:
        ending = suffix.group(1).lower()
        return lambda rel: rel.lower().endswith(ending)
    regex = glob_regex(pattern)
    return lambda rel: regex.match(rel) is not None


def is_ignored(rel: str, ignore: tuple[str, ...]) -> bool:
    """A path is ignored when it, or any folder above it, matches an ignore glob."""
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        for pattern in ignore:
            if matches(pattern, prefix) or matches(pattern.rstrip("/") + "/**", prefix):
                return True
    return False


def hidden_or_ignored_dir(name: str) -> bool:
    """Folders never indexed: dot-folders and tool folders."""
    return name.startswith(".") or name in ALWAYS_IGNORED_DIRS


def scan(
    root: Path,
    pattern: str,
    ignore: tuple[str, ...] = (),
    warn: Callable[[str, str], None] | None = None,
    every: set[str] | None = None,
) -> Iterator[FileStat]:
    """Yield every file under `root` matching `pattern` and no ignore glob, in sorted order.

    Symlinks are skipped (one pointing outside `root` is reported); unreadable entries are
    reported through `warn(rel, message)` and skipped. With `every`, the same walk also adds
    to it every file Obsidian would see, whatever the mask and the ignore globs (what links
    resolve against: index/links.py), so a full update walks the folder once.
    """
    seen: set[tuple[int, int]] = set()
    try:
        st = root.stat()
    except OSError as exc:
        if warn:
            warn("", f"cannot read collection folder {root}: {exc.strerror}")
        return
    seen.add((st.st_dev, st.st_ino))
    walk = _Walk(root, matcher(pattern), pattern, ignore, seen, warn, every)
    yield from walk.folder(root, "", True)


class _Walk:
    """One walk of a collection's folder (see `scan`)."""

    def __init__(
        self,
        root: Path,
        match: Callable[[str], bool],
        pattern: str,
        ignore: tuple[str, ...],
        seen: set[tuple[int, int]],
        warn: Callable[[str, str], None] | None,
        every: set[str] | None,
    ) -> None:
        self.root, self.match, self.pattern, self.ignore = root, match, pattern, ignore
        self.seen, self.warn, self.every = seen, warn, every

    def folder(self, folder: Path, rel_folder: str, listed: bool) -> Iterator[FileStat]:
        """The files of a folder and those under it; `listed` False: an ignored folder,
        walked only for `every`."""
        warn = self.warn if listed else None
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if warn:
                warn(rel_folder, f"cannot list folder: {exc.strerror}")
            return
        for entry in entries:
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            if not utf8_name(entry.name):
                if warn and not entry.name.startswith("."):
                    warn(
                        rel.encode("utf-8", "replace").decode(), "name is not valid UTF-8; skipped"
                    )
                continue
            try:
                if entry.is_symlink():
                    if warn and self._escapes(entry, rel):
                        warn(rel, "symlink to outside the collection skipped")
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as exc:
                if warn:
                    warn(rel, f"unreadable entry skipped: {exc.strerror}")
                continue
            if is_dir:
                yield from self._subfolder(entry, rel, listed)
            elif entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            else:
                if self.every is not None:
                    self.every.add(rel)
                if listed and self._wanted(rel):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError as exc:
                        if warn:
                            warn(rel, f"unreadable entry skipped: {exc.strerror}")
                        continue
                    yield FileStat(rel, entry.path, st.st_mtime_ns, st.st_size)

    def _subfolder(self, entry: os.DirEntry[str], rel: str, listed: bool) -> Iterator[FileStat]:
        if hidden_or_ignored_dir(entry.name):
            return
        ignored = listed and bool(self.ignore) and is_ignored(rel, self.ignore)
        if ignored and self.every is None:
            return
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            if self.warn and listed:
                self.warn(rel, f"unreadable entry skipped: {exc.strerror}")
            return
        key = (st.st_dev, st.st_ino)
        if key in self.seen:
            if self.warn and listed:
                self.warn(rel, "folder loop skipped (a bind mount?)")
            return
        self.seen.add(key)  # a bind mount can still loop
        yield from self.folder(Path(entry.path), rel, listed and not ignored)

    def _escapes(self, entry: os.DirEntry[str], rel: str) -> bool:
        """A symlink the walk would have used, pointing out of the collection (reported)."""
        return _listed(entry, rel, self.pattern, self.ignore) and not stays_inside(self.root, rel)

    def _wanted(self, rel: str) -> bool:
        return (
            self.match(rel)
            and not rel.lower().endswith(NEVER_NOTES)
            and not (self.ignore and is_ignored(rel, self.ignore))
        )


def _listed(entry: os.DirEntry[str], rel: str, pattern: str, ignore: tuple[str, ...]) -> bool:
    """Would the walk have used this entry, were it not a symlink? (Only those are reported.)"""
    if entry.name.startswith(".") or (ignore and is_ignored(rel, ignore)):
        return False
    try:
        return entry.is_dir() or matches(pattern, rel)
    except OSError:
        return matches(pattern, rel)


def utf8_name(name: str) -> bool:
    """Is a file name valid UTF-8? (Undecodable bytes arrive as lone surrogates, which the
    index, JSON and every client refuse.)"""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def stays_inside(root: Path, rel: str) -> bool:
    """True when `root/rel`, symlinks resolved, stays inside `root` (a dangling or looping
    link counts as inside: it reads nothing)."""
    try:
        safe_join(root, rel)
    except UnsafePathError:
        return False
    except (OSError, RuntimeError, ValueError):
        return True
    return True


def stat_file(root: Path, rel: str, warn: Callable[[str, str], None]) -> os.stat_result | None:
    """The stat of `root/rel` when it is a regular file reached through no symlink, as the
    folder walk would list it; None otherwise (a symlink out of `root` is reported)."""
    if not utf8_name(rel):
        return None
    try:
        real = safe_join(root, rel)
    except UnsafePathError:
        warn(rel, "symlink to outside the collection skipped")
        return None
    except (OSError, RuntimeError, ValueError):
        return None
    if real != root.resolve() / rel:
        return None  # a path through a symlink: its target is indexed under its own path
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        warn(rel, f"unreadable: {exc.strerror}")
        return None
    return st if stat.S_ISREG(st.st_mode) else None
