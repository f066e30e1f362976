"""Writing several vault files all-or-nothing, each only if it is still the version we read.

`commit(root, changes)` locks every existing file involved (flock, in path order), checks every
precondition, writes each new text to a temp file beside its target, then puts them in place
one by one. If any step fails, what was already put in place is undone (old bytes written back,
created files removed) before the error is raised. New files are created with a hard link,
which fails instead of overwriting a file that appeared meanwhile.

The locks make two Engram writers (threads or processes) serialize on a note: the second one
then sees the first one's hash and gets ConflictError. A program that does not take the lock
(an editor) can still write between our check and our rename; that window is a few
milliseconds, the same as any check-then-rename.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from engram.errors import ConflictError

from .fsio import _fsync_dir, decode, is_binary, safe_join, sha256_hex

try:  # POSIX; elsewhere the precondition checks still run, without the lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


BOM = "\ufeff"


@dataclass(frozen=True)
class Snapshot:
    """A file as read before an edit: its bytes' hash and, for a text note, its text.

    `text` is None when the file cannot be edited as text (`why` says why: binary, not
    UTF-8); such a file can still be moved or trashed as it is.
    """

    data: bytes
    sha256: str
    text: str | None
    bom: bool = False
    why: str | None = None

    def encode(self, text: str) -> bytes:
        """New text as bytes, with the byte-order mark the file had."""
        return ((BOM if self.bom else "") + text).encode("utf-8")


def snapshot(path: Path) -> Snapshot:
    """Read a file for editing (FileNotFoundError when it is not there)."""
    data = path.read_bytes()
    sha = sha256_hex(data)
    if is_binary(data):
        return Snapshot(data, sha, None, why="it is a binary file")
    text, warning = decode(data)
    if warning:
        return Snapshot(data, sha, None, why=f"it is not valid UTF-8 ({warning})")
    return Snapshot(data, sha, text, data.startswith(BOM.encode()))


@dataclass(frozen=True)
class Change:
    """One file change: write `data` at `path` (vault-relative), or move `source` there.

    `expected` is the sha256 of the file being replaced or moved ("" = `path` must not exist
    yet). A move with `data` writes the new text at `path` and removes `source`; without
    `data` it renames the file as it is.
    """

    path: str
    data: bytes | None
    expected: str
    source: str | None = None


def commit(root: Path, changes: list[Change]) -> None:
    """Apply every change or none (see the module docstring)."""
    plan = []
    for c in changes:
        target = safe_join(root, c.path)
        source = safe_join(root, c.source) if c.source else None
        in_place = source is not None and target.exists() and _same_file(source, target)
        plan.append(_Planned(c, target, source, in_place))
    _check_distinct(plan)
    existing = sorted({p.old for p in plan if p.old is not None}, key=str)
    with _locked(existing):
        old_bytes = {p.old: _check(p) for p in plan if p.old is not None}
        for p in plan:
            if p.change.expected == "" or p.change.source is not None:
                _must_be_free(p)
        undo: list[tuple[str, Path, bytes | None]] = []
        staged: list[Path] = []
        try:
            temps: dict[int, Path] = {}
            for p in plan:
                if p.change.data is not None:
                    temps[id(p)] = _stage(p.target, p.change.data, p.old)
                    staged.append(temps[id(p)])
            for p in plan:
                _put(p, temps.get(id(p)), old_bytes, undo)
            for p in plan:  # sources go last: until here every original is still in place
                if p.old is not None and p.change.source and not p.in_place:
                    p.old.unlink()
                    undo.append(("restore", p.old, old_bytes[p.old]))
        except BaseException:
            _rollback(undo)
            raise
        finally:
            for tmp in staged:
                tmp.unlink(missing_ok=True)
        for folder in {p.target.parent for p in plan} | {p.old.parent for p in plan if p.old}:
            _fsync_dir(folder)


@dataclass(frozen=True)
class _Planned:
    change: Change
    target: Path
    source: Path | None
    in_place: bool = False  # a case-only rename on a case-insensitive disk

    @property
    def old(self) -> Path | None:
        """The existing file this change replaces or moves (None: a new file)."""
        if self.source is not None:
            return self.source
        return None if self.change.expected == "" else self.target


def _check_distinct(plan: list[_Planned]) -> None:
    targets = [p.target for p in plan]
    if len(set(targets)) != len(targets):
        raise ValueError("two changes write the same file")


@contextlib.contextmanager
def _locked(paths: list[Path]) -> Iterator[None]:
    handles = []
    try:
        for path in paths:
            try:
                fh = open(path, "rb")  # noqa: SIM115 - closed below
            except FileNotFoundError:
                raise ConflictError(f"{path.name} was moved or deleted since it was read") from None
            handles.append(fh)
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        for fh in handles:
            fh.close()  # closing releases the lock


def _check(p: _Planned) -> bytes:
    assert p.old is not None
    try:
        data = p.old.read_bytes()
    except FileNotFoundError:
        raise ConflictError(f"{p.old.name} was moved or deleted since it was read") from None
    if sha256_hex(data) != p.change.expected:
        raise ConflictError(
            f"{p.old.name} changed since it was read; nothing was written",
            "read the note again (its hash changed) and retry",
        )
    return data


def _must_be_free(p: _Planned) -> None:
    if p.target.exists() and not p.in_place:
        raise ConflictError(f"{p.change.path} already exists; nothing was written")


def _same_file(a: Path, b: Path) -> bool:
    """True when `a` and `b` are one file (a case-only rename on a case-insensitive disk)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _stage(target: Path, data: bytes, like: Path | None) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if like is not None:
            os.chmod(tmp, like.stat().st_mode & 0o7777)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _put(
    p: _Planned,
    tmp: Path | None,
    old_bytes: dict[Path, bytes],
    undo: list[tuple[str, Path, bytes | None]],
) -> None:
    """Put one change in place and record how to take it back."""
    if p.change.source is None and p.change.expected != "":
        assert tmp is not None and p.old is not None
        if sha256_hex(p.old.read_bytes()) != p.change.expected:  # last look before replacing
            raise ConflictError(f"{p.old.name} changed while writing; nothing was written")
        os.replace(tmp, p.target)
        undo.append(("restore", p.target, old_bytes[p.target]))
        return
    if p.old is not None and p.in_place:  # case-only rename
        if tmp is not None:
            os.replace(tmp, p.old)
            undo.append(("restore", p.old, old_bytes[p.old]))
        os.rename(p.old, p.target)
        undo.append(("rename-back", p.target, os.fsencode(p.old)))
        return
    p.target.parent.mkdir(parents=True, exist_ok=True)
    src = tmp if tmp is not None else p.old
    assert src is not None
    _link_new(src, p.target, move=tmp is None)
    undo.append(("remove", p.target, None))


def _link_new(src: Path, target: Path, move: bool) -> None:
    """Give `src` the name `target`, failing if `target` exists (hard link, or rename)."""
    try:
        os.link(src, target)
        return
    except FileExistsError:
        raise ConflictError(f"{target.name} appeared while writing; nothing was written") from None
    except OSError:  # no hard links here (some network and FAT file systems)
        pass
    if target.exists():
        raise ConflictError(f"{target.name} appeared while writing; nothing was written")
    if move:  # the source is removed afterwards; copy so a rollback has it intact
        import shutil

        shutil.copy2(src, target)
    else:
        os.rename(src, target)


def _rollback(undo: list[tuple[str, Path, bytes | None]]) -> None:
    for action, path, data in reversed(undo):
        with contextlib.suppress(OSError):
            if action == "remove":
                path.unlink(missing_ok=True)
            elif action == "restore" and data is not None:
                _restore(path, data)
            elif action == "rename-back" and data is not None:
                os.rename(path, Path(os.fsdecode(data)))


def _restore(path: Path, data: bytes) -> None:
    tmp = _stage(path, data, None)
    try:
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
