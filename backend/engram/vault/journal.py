"""Writing vault files all-or-nothing, across errors and crashes.

`commit(root, changes)` turns the changes into steps (write, create, move, remove), checks
every precondition, then:

1. records the intent in `<root>/.engram/journal/<id>.json` — per step the file, its
   temporary file, the hash it must still have and the hash it will have — and holds a
   lock on that file while it works (fsync'd first when several files change);
2. stages every new text in its temporary file beside the target (fsync);
3. applies the steps one by one through `vault.atomic`, each re-checking its file under the
   lock right before its swap; after a swap the temporary name holds the old text;
4. removes the temporary files and the journal.

If a step fails, the steps already applied are taken back (each only while the file is still
the version Engram wrote) and the error is raised. If the process dies, the journal stays:
the next Engram process that opens the index calls `recover(root)`, which finishes the write
when every remaining step still applies and undoes it otherwise, never overwriting a file
someone changed since. The journal lives in the vault, not the index, so deleting or
rebuilding the index never loses it; the indexer ignores dot folders.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import secrets
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from engram.errors import ConflictError, InvalidInputError

from . import atomic
from .fsio import safe_join, sha256_hex

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

JOURNAL_DIR = ".engram/journal"
_crash_after: list[int] = []  # testing aid: SIGKILL this process after N renames


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


@dataclass(frozen=True)
class Step:
    """One journaled file operation (paths vault-relative; see `_apply`)."""

    do: str  # write | create | move | remove
    path: str  # the file written, created or removed; a move's new name
    tmp: str | None = None  # write: new text, then the old one; create: new text; remove: grave
    old: str | None = None  # hash the existing file must have
    new: str | None = None  # hash of the new text
    source: str | None = None  # a move's old name


@dataclass(frozen=True)
class Recovered:
    """What `recover` did with one interrupted operation."""

    label: str
    outcome: str  # finished | undone | partly undone | not understood
    paths: tuple[str, ...]  # files it touched (to index again)
    changed: tuple[str, ...] = ()  # files someone changed since: left as they are
    kept: tuple[str, ...] = field(default=())  # temporary files with unknown text, left


def commit(root: Path, changes: list[Change], label: str = "write") -> None:
    """Apply every change or none (see the module docstring)."""
    at = _Root(root)
    steps, data = _plan(at, changes)
    _precheck(at, steps)
    with (
        _named(at(steps[0].path) if steps else root),
        _journal(root, steps, label, len(steps) > 1) as done,
    ):
        applied: list[Step] = []
        try:
            for s in steps:
                if s.tmp is not None and s.do != "remove":
                    target = at(s.path)
                    with atomic.name_errors(target):
                        target.parent.mkdir(parents=True, exist_ok=True)
                        atomic.stage(target.parent, data[s.path], _like(at, s), at=at.tmp(s))
            _fault(0)
            for s in steps:
                with atomic.name_errors(at(s.path)):
                    _apply(at, s)
                applied.append(s)
                _fault(len(applied))
        except BaseException:
            stuck = []
            for s in reversed(applied):
                try:
                    _undo(at, s)
                except (ConflictError, OSError):  # changed since: theirs stays, and ours too
                    stuck.append(s)
            _cleanup(at, [s for s in steps if s not in stuck])
            done()
            raise
        _cleanup(at, steps, verify=False)  # each swap checked what it displaced
        for folder in {at(p).parent for s in steps for p in _names(s)}:
            atomic.fsync_dir(folder)
        done()


@contextlib.contextmanager
def _named(target: Path) -> Iterator[None]:
    """An error that names no file, or only the journal's own, names `target` instead: the
    note a person asked to write is what could not be written (a full or read-only disk)."""
    try:
        yield
    except OSError as exc:
        ours = exc.filename is None or JOURNAL_DIR in Path(str(exc.filename)).as_posix()
        if exc.errno is not None and ours:
            exc.filename, exc.filename2 = str(target), None
        raise


def recover(root: Path) -> list[Recovered]:
    """Finish or undo every operation a dead process left in `root`'s journal."""
    folder = root / JOURNAL_DIR
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.iterdir()):
        with _claimed(path) as record:
            if record is None:
                continue
            if path.suffix == ".json" and record:
                try:
                    out.append(_recover_one(_Root(root), record))
                except InvalidInputError:  # a path leaving the vault: not ours, touch nothing
                    out.append(Recovered(str(record.get("label")), "not understood", ()))
            path.unlink(missing_ok=True)
    return out


def pending(root: Path) -> list[str]:
    """Operations in `root`'s journal (labels): running now, or left by a crash."""
    folder = root / JOURNAL_DIR
    if not folder.is_dir():
        return []
    labels = []
    for path in sorted(folder.glob("*.json")):
        try:
            labels.append(str(json.loads(path.read_text(encoding="utf-8")).get("label")))
        except (OSError, ValueError, AttributeError):
            labels.append(path.name)
    return labels


def leftover_temps(root: Path, limit: int = 20) -> list[str]:
    """Temporary files of interrupted writes in `root` (vault-relative), up to `limit`."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", "node_modules")]
        for name in filenames:
            if atomic.is_temp(name) or _old_temp(name):
                found.append(Path(dirpath, name).relative_to(root).as_posix())
                if len(found) >= limit:
                    return found
    return found


def crash_after(renames: int) -> None:
    """Testing aid: kill this process (SIGKILL) once a write has done `renames` renames
    (0: after staging, before the first)."""
    _crash_after[:] = [renames]


def _fault(renames: int) -> None:
    if _crash_after and _crash_after[0] == renames:
        os.kill(os.getpid(), signal.SIGKILL)


def _old_temp(name: str) -> bool:
    """A temporary file of Engram before 0.x (`.<note name>.<8 chars>.tmp`)."""
    parts = name.rsplit(".", 2)
    return name.startswith(".") and len(parts) == 3 and parts[2] == "tmp" and len(parts[1]) == 8


def _plan(at: _Root, changes: list[Change]) -> tuple[list[Step], dict[str, bytes]]:
    steps: list[Step] = []
    removes: list[Step] = []
    data: dict[str, bytes] = {}
    for c in changes:
        target = at(c.path)
        tmp = _rel_temp(c.path)
        if c.data is not None:
            data[c.path] = c.data
        new = sha256_hex(c.data) if c.data is not None else None
        if c.source is None:
            do = "create" if c.expected == "" else "write"
            steps.append(Step(do, c.path, tmp, c.expected or None, new))
        elif c.data is None:
            steps.append(Step("move", c.path, None, c.expected, None, c.source))
        elif _same_file(at(c.source), target):  # case-only rename, new text
            data[c.source] = c.data
            steps.append(Step("write", c.source, _rel_temp(c.source), c.expected, new))
            steps.append(Step("move", c.path, None, new, None, c.source))
        else:
            steps.append(Step("create", c.path, tmp, None, new))
            removes.append(Step("remove", c.source, _rel_temp(c.source), c.expected))
    steps += removes  # sources go last: until then every original is still in place
    names = [s.path for s in steps if s.do != "remove"]
    if len(set(names)) != len(names):
        raise ValueError("two changes write the same file")
    return steps, data


class _Root:
    """A vault root; each path in it is resolved and checked (`safe_join`) once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root.resolve()
        self._seen: dict[str, Path] = {}

    def __call__(self, rel: str) -> Path:
        if rel not in self._seen:
            self._seen[rel] = safe_join(self.root, rel)
        return self._seen[rel]

    def tmp(self, s: Step) -> Path:
        """A step's temporary file: always beside the step's file, whatever the record says."""
        assert s.tmp is not None
        return self(s.path).parent / posixpath.basename(s.tmp)


def _rel_temp(rel: str) -> str:
    return posixpath.join(posixpath.dirname(rel), atomic.temp_name(Path()).name)


def _like(at: _Root, s: Step) -> Path | None:
    """The file whose mode a new text takes: the one it replaces."""
    return at(s.path) if s.do == "write" else None


def _names(s: Step) -> list[str]:
    return [p for p in (s.path, s.source) if p]


def _precheck(at: _Root, steps: list[Step]) -> None:
    """Every precondition, before anything is written (each is checked again at its swap)."""
    for s in steps:
        if s.do == "create":
            if os.path.lexists(at(s.path)):
                raise ConflictError(f"{s.path} already exists; nothing was written")
            continue
        rel = s.source if s.do == "move" and s.source else s.path
        target = at(s.path)
        if s.do == "move" and os.path.lexists(target) and not _same_file(at(rel), target):
            raise ConflictError(f"{s.path} already exists; nothing was written")
        if s.do == "move" and s.old and any(p.do == "write" and p.path == s.source for p in steps):
            continue  # renamed after its own rewrite: the hash checked is the rewrite's
        current = _hash(at(rel))
        if current is None:
            raise ConflictError(f"{rel} was moved or deleted since it was read")
        if current != s.old:
            raise ConflictError(
                f"{rel} changed since it was read; nothing was written",
                "read the note again (its hash changed) and retry",
            )


def _apply(at: _Root, s: Step) -> None:
    path = at(s.path)
    tmp = at.tmp(s) if s.tmp else None
    if s.do == "write":
        assert tmp is not None and s.old is not None
        atomic.replace(tmp, path, s.old)
    elif s.do == "create":
        assert tmp is not None
        atomic.create(tmp, path)
    elif s.do == "move":
        assert s.source is not None and s.old is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.move(at(s.source), path, s.old)
    else:
        assert tmp is not None and s.old is not None
        atomic.remove(path, tmp, s.old)


def _undo(at: _Root, s: Step) -> None:
    """Take an applied step back, only while its file is still what Engram made it."""
    path = at(s.path)
    tmp = at.tmp(s) if s.tmp else None
    if s.do == "write":
        assert tmp is not None and s.new is not None
        atomic.replace(tmp, path, s.new)  # the old text comes back from the temporary name
    elif s.do == "create":
        assert s.new is not None
        grave = atomic.temp_name(path.parent)
        atomic.remove(path, grave, s.new)
        grave.unlink()
    elif s.do == "move":
        assert s.source is not None and s.old is not None
        atomic.move(path, at(s.source), s.old)
    else:
        assert tmp is not None
        atomic.create(tmp, path)


def _cleanup(at: _Root, steps: list[Step], verify: bool = True) -> list[str]:
    """Remove the steps' temporary files; with `verify`, one whose text is neither the old
    nor the new one (someone wrote into it) is left where it is and returned."""
    kept = []
    for s in steps:
        if s.tmp is None:
            continue
        tmp = at.tmp(s)
        for name in (tmp, atomic.keep_name(tmp)):
            if not verify:
                name.unlink(missing_ok=True)
                continue
            digest = _hash(name)
            if digest is None:
                continue
            if digest in (s.old, s.new):
                name.unlink(missing_ok=True)
            else:
                kept.append(name.relative_to(at.base).as_posix())
    return kept


@contextlib.contextmanager
def _journal(
    root: Path, steps: list[Step], label: str, durable: bool
) -> Iterator[Callable[[], None]]:
    """Write the journal and hold its lock; the block gets a function that removes it."""
    folder = root / JOURNAL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    op = f"{time.time_ns():x}-{secrets.token_hex(3)}"
    final, tmp = folder / f"{op}.json", folder / f".{op}.tmp"
    record = json.dumps({"version": 1, "label": label, "steps": [asdict(s) for s in steps]})
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # a live operation: recovery leaves it alone
        os.write(fd, record.encode("utf-8"))
        if durable:
            os.fsync(fd)
        os.replace(tmp, final)
        if durable:
            atomic.fsync_dir(folder)
        yield lambda: final.unlink(missing_ok=True)
    finally:
        tmp.unlink(missing_ok=True)
        os.close(fd)


@contextlib.contextmanager
def _claimed(path: Path) -> Iterator[dict[str, object] | None]:
    """A journal file nobody is working on, locked, and its record ({} when unreadable);
    None when a live process holds it or it is gone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        yield None
        return
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield None
                return
        if not os.path.exists(path) or os.stat(path).st_ino != os.fstat(fd).st_ino:
            yield None  # finished and removed meanwhile
            return
        try:
            raw = os.read(fd, 16 << 20)
            record = json.loads(raw.decode("utf-8")) if path.suffix == ".json" else {}
        except (OSError, ValueError):
            record = {}
        yield record if isinstance(record, dict) else {}
    finally:
        os.close(fd)


def _recover_one(at: _Root, record: dict[str, object]) -> Recovered:
    raw = record.get("steps")
    try:
        steps = [Step(**s) for s in raw if isinstance(s, dict)] if isinstance(raw, list) else []
    except TypeError:  # not a journal this version wrote: touch nothing
        steps = []
    label = str(record.get("label") or "write")
    for s in steps:
        _settle_emulated(at, s)
    states = [_state(at, s) for s in steps]
    paths = tuple(dict.fromkeys(p for s in steps for p in _names(s)))
    outcome = "undone"
    if all(st in ("done", "todo") for st in states):
        try:
            for s, st in zip(steps, states, strict=True):
                if st == "todo":
                    _apply(at, s)
            outcome = "finished"
        except (ConflictError, OSError):
            states = [_state(at, s) for s in steps]
    changed: list[str] = []
    stuck: list[Step] = []
    if outcome != "finished":
        for s, st in reversed(list(zip(steps, states, strict=True))):
            if st == "done":
                try:
                    _undo(at, s)
                except (ConflictError, OSError):
                    changed.append(s.path)
                    stuck.append(s)
            elif st == "changed":
                changed.append(s.path)
        if stuck:  # Engram's change stays under the person's edit of it
            outcome = "partly undone"
    kept = _cleanup(at, [s for s in steps if s not in stuck])
    return Recovered(label, outcome, paths, tuple(changed), tuple(kept))


def _state(at: _Root, s: Step) -> str:
    """done (applied), todo (still to apply, and can be), or changed (someone else's)."""
    path = at(s.path)
    here = _hash(path)
    tmp = _hash(at.tmp(s)) if s.tmp else None
    if s.do == "write":
        if here == s.new:
            return "done"
        return "todo" if here == s.old and tmp == s.new else "changed"
    if s.do == "create":
        if here == s.new:
            return "done"
        return "todo" if here is None and tmp == s.new else "changed"
    if s.do == "move":
        assert s.source is not None
        src = at(s.source)
        if _same_file(src, path):
            return "done"
        there = _hash(src)
        if there is None and here == s.old:
            return "done"
        return "todo" if there == s.old and here is None else "changed"
    if here is None and tmp == s.old:
        return "done"
    return "todo" if here == s.old else "changed"


def _settle_emulated(at: _Root, s: Step) -> None:
    """Finish the renames of an emulated swap (`atomic._replace_emulated`) a crash cut short,
    so the step is either applied or not."""
    if s.do != "write" or s.tmp is None:
        return
    tmp = at.tmp(s)
    keep = atomic.keep_name(tmp)
    if _hash(keep) != s.old or _hash(tmp) == s.old:
        return
    if _hash(at(s.path)) == s.new:
        os.replace(keep, tmp)  # applied: the temporary name holds the old text
    else:
        keep.unlink()  # not applied: the old text is still in place


def _hash(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
