"""The one way Engram writes a file: never over a version it did not read.

A new text goes to a temporary file beside its target (short name, fsync), and takes the
target's place only if the target still holds the version the caller read. The final check
runs under the file's lock, and the swap is verified after it happens:

- `flock` on the target serializes Engram writers (threads or processes) on one file;
- a Linux write lease on the same descriptor makes the kernel hold back any other program
  that opens the file (an editor saving in place) until we are done, and tells us it tried;
- the swap is an atomic exchange (`renameat2(RENAME_EXCHANGE)`, macOS `RENAME_SWAP`), so the
  file we displaced stays on disk under the temporary name, and we check it is the one we
  read (same inode, same hash, no writer waiting on it). If not, we exchange back: the
  person's file is in place again — the very inode their editor holds open — and the caller
  gets ConflictError.

Where the OS or file system offers no lease or no exchange (NFS, FAT, Windows), the same
steps run with a link and a rename, and an in-place save landing after the last check can
still be lost; docs/notes.md states the guarantee.

After a swap the temporary name holds the old text, so a journaled multi-file write
(`vault.journal`) can take a change back; a single write removes it at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import secrets
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from engram.errors import ConflictError, InvalidInputError

from .fsio import decode, is_binary, sha256_hex

try:  # POSIX; elsewhere the checks still run, without locks
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

TEMP_PREFIX = ".engram-"
TEMP_SUFFIX = ".tmp"
KEEP_SUFFIX = ".old"  # the old file's second name while a swap is emulated without exchange
BOM = "\ufeff"
_F_SETLEASE, _F_GETLEASE, _F_SETSIG = 1024, 1025, 10  # Linux fcntl commands
_LEASE_TRIES = 20  # x 5 ms: another reader (our own indexer, a sync tool) may hold it open
_RENAME_EXCHANGE, _RENAME_NOREPLACE = 2, 1  # Linux renameat2 flags
_RENAME_SWAP, _RENAME_EXCL = 2, 4  # macOS renamex_np flags
_AT_FDCWD = -100
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV}


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


def write_file(path: Path, data: bytes, expected: str | None = None, private: bool = False) -> str:
    """Write `path` atomically; return the new hash.

    `expected`: None writes whatever is there (Engram's own state files); "" means the file
    must not exist yet; a sha256 means the file must still have it (else ConflictError).
    `private`: the file is only for its owner (mode 0600), whatever mode it had.
    """
    with name_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = stage(path.parent, data, like=path if expected != "" else None)
        if private:
            os.chmod(tmp, 0o600)
        try:
            if expected is None:
                os.replace(tmp, path)
            elif expected == "":
                create(tmp, path)
            else:
                replace(tmp, path, expected)
        finally:
            tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return sha256_hex(data)


def write_if_changed(path: Path, pieces: Iterable[bytes]) -> bool:
    """Write a file Engram alone keeps (no precondition) from pieces, without holding it all
    in memory; leave it as it is when it already holds exactly that (True when written).

    The pieces are compared with the file as they come, and a temporary file is begun only at
    the first difference (its equal start copied from the file as it was opened): the common
    case, a graph rebuilt after an edit that changed no link, reads the file once and writes
    nothing, where staging it whole would write and sync it all (235 MB at 100,000 notes).
    """
    rest = iter(pieces)
    with name_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            old = path.open("rb")
        except FileNotFoundError:
            old = None
        with old if old is not None else contextlib.nullcontext():
            equal = 0
            for piece in rest:
                if old is None or old.read(len(piece)) != piece:
                    first = piece
                    break
                equal += len(piece)
            else:
                if old is not None and not old.read(1):
                    return False  # every piece matched, and the file has nothing more
                first = b""
            tmp = stage(path.parent, _resumed(old, equal, first, rest), like=path)
        try:
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return True


def _resumed(
    old: BinaryIO | None, equal: int, first: bytes, rest: Iterator[bytes]
) -> Iterator[bytes]:
    """The first `equal` bytes of `old` (the same open file, so the bytes compared even if the
    path was replaced meanwhile), then `first` and the pieces left."""
    if old is not None:
        old.seek(0)
        while equal > 0:
            block = old.read(min(equal, 1 << 20))
            if not block:
                raise OSError(errno.EIO, "the file shrank while it was copied")
            equal -= len(block)
            yield block
    yield first
    yield from rest


def temp_name(folder: Path) -> Path:
    """A free-looking temporary name in `folder`: 21 bytes, whatever the target's name."""
    return folder / f"{TEMP_PREFIX}{secrets.token_hex(4)}{TEMP_SUFFIX}"


def is_temp(name: str) -> bool:
    """True for the name of one of our temporary files."""
    return name.startswith(TEMP_PREFIX) and name.endswith((TEMP_SUFFIX, TEMP_SUFFIX + KEEP_SUFFIX))


def stage(
    folder: Path, data: bytes | Iterable[bytes], like: Path | None = None, at: Path | None = None
) -> Path:
    """Write `data` (bytes, or pieces of them) to a new temporary file in `folder` (or at
    `at`), fsynced; with the mode of `like` when that file exists (a new note gets the usual
    mode, umask applied)."""
    tmp = at or temp_name(folder)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in (data,) if isinstance(data, bytes) else data:
                fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        if like is not None:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(tmp, like.stat().st_mode & 0o7777)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def replace(tmp: Path, target: Path, expected: str) -> None:
    """Put the staged `tmp` in place of `target` if `target` still has hash `expected`;
    afterwards `tmp` holds the old file (see the module docstring). ConflictError, with
    nothing changed, when the target is not the version read."""
    with held(target) as h:
        h.check(expected)
        if exchange(tmp, target):
            if h.is_at(tmp) and h.unchanged(expected):
                return
            exchange(tmp, target)  # put the person's file back: their editor holds it
            raise _changed(target)
        _replace_emulated(h, tmp, target, expected)


def _replace_emulated(h: Held, tmp: Path, target: Path, expected: str) -> None:
    """`replace` without an atomic exchange: keep the old file's inode under a second name,
    rename the new one in, and give the temporary name to the old file."""
    keep = keep_name(tmp)
    os.link(target, keep)
    if not h.is_at(keep):  # replaced (renamed over) since the check
        keep.unlink()
        raise _changed(target)
    os.replace(tmp, target)
    if not h.unchanged(expected):
        os.link(target, tmp)  # ours goes back to the temporary name, theirs into place
        os.replace(keep, target)
        raise _changed(target)
    os.replace(keep, tmp)


def keep_name(tmp: Path) -> Path:
    """The second name of an old file while a swap is emulated."""
    return tmp.with_name(tmp.name + KEEP_SUFFIX)


def create(tmp: Path, target: Path) -> None:
    """Give the staged `tmp` the name `target`, which must not exist (ConflictError)."""
    try:
        os.link(tmp, target)
        return
    except FileExistsError:
        raise ConflictError(f"{target.name} already exists; nothing was written") from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise
    rename_new(tmp, target)  # no hard links on this file system


def move(source: Path, target: Path, expected: str) -> None:
    """Rename `source` (still hash `expected`) to `target`, which must not exist. An edit
    made in place meanwhile travels with the file (it is the same inode)."""
    with held(source) as h:
        h.check(expected)
        if _same_file(source, target):  # a case-only rename on a case-insensitive disk
            os.rename(source, target)
            return
        rename_new(source, target)
        if not h.is_at(target):  # the source was replaced since the check: undo
            rename_new(target, source)
            raise _changed(source)


def remove(path: Path, grave: Path, expected: str) -> None:
    """Take `path` (still hash `expected`) away to the temporary name `grave`."""
    with held(path) as h:
        h.check(expected)
        os.rename(path, grave)
        if h.is_at(grave) and h.unchanged(expected):
            return
        rename_new(grave, path)
        raise _changed(path)


def rename_new(source: Path, target: Path) -> None:
    """Rename without ever replacing an existing `target` (ConflictError if it exists)."""
    if _rename_flags(source, target, _RENAME_NOREPLACE, _RENAME_EXCL):
        return
    try:
        os.link(source, target)
    except FileExistsError:
        raise ConflictError(f"{target.name} already exists; nothing was written") from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise
        if os.path.lexists(target):
            raise ConflictError(f"{target.name} already exists; nothing was written") from None
        os.rename(source, target)
        return
    os.unlink(source)


def exchange(a: Path, b: Path) -> bool:
    """Swap two names atomically; False when this OS or file system cannot."""
    return _rename_flags(a, b, _RENAME_EXCHANGE, _RENAME_SWAP)


def _rename_flags(a: Path, b: Path, linux: int, mac: int) -> bool:
    fn = _renamer()
    if fn is None:
        return False
    src, dst = os.fsencode(a), os.fsencode(b)
    if sys.platform == "darwin":
        rc = fn(src, dst, mac)
    else:
        rc = fn(_AT_FDCWD, src, _AT_FDCWD, dst, linux)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    if err == errno.EEXIST:
        raise ConflictError(f"{b.name} already exists; nothing was written")
    raise OSError(err, os.strerror(err), str(a), None, str(b))


_RENAMER: list[Callable[..., int] | None] = []


def _renamer() -> Callable[..., int] | None:
    """libc's renameat2 (Linux) or renamex_np (macOS), looked up once; None elsewhere."""
    if not _RENAMER:
        fn = None
        with contextlib.suppress(OSError, AttributeError, TypeError):  # TypeError: Windows
            libc = ctypes.CDLL(None, use_errno=True)
            fn = libc.renamex_np if sys.platform == "darwin" else libc.renameat2
        _RENAMER.append(fn)
    return _RENAMER[0]


class Held:
    """An existing file held while it is replaced: open, flocked, and leased where Linux
    allows (no other program can open it without us knowing, and none had it open)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.fd = _open_existing(path)
        except (FileNotFoundError, NotADirectoryError):
            raise ConflictError(f"{path.name} was moved or deleted since it was read") from None
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise ConflictError(f"{path.name} became a symbolic link; not written") from None
        st = os.fstat(self.fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(self.fd)
            raise ConflictError(f"{path.name} is no longer a regular file; nothing was written")
        self.ident = (st.st_dev, st.st_ino)
        self.leased = False
        if fcntl is not None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.leased = _lease(self.fd)

    def digest(self) -> str:
        """sha256 of the held file now (read through our descriptor: opening it again by
        name would break our own lease)."""
        h = hashlib.sha256()
        os.lseek(self.fd, 0, os.SEEK_SET)
        while chunk := os.read(self.fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()

    def check(self, expected: str) -> None:
        """ConflictError unless the file at our path is the one held, with hash `expected`."""
        if not self.is_at(self.path) or self.digest() != expected:
            raise _changed(self.path)

    def is_at(self, path: Path) -> bool:
        """True when `path` names the held file."""
        try:
            st = os.lstat(path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.ident

    def unchanged(self, expected: str) -> bool:
        """Still hash `expected`, and no program waiting to open it for writing."""
        return not self.writer_waiting() and self.digest() == expected

    def writer_waiting(self) -> bool:
        """True when a program tried to open the file for writing since we leased it."""
        if not self.leased or fcntl is None:
            return False
        return bool(fcntl.fcntl(self.fd, _F_GETLEASE) == fcntl.F_UNLCK)

    def close(self) -> None:
        """Release the lease (a waiting program goes on) and the lock."""
        if self.leased and fcntl is not None:
            with contextlib.suppress(OSError):
                fcntl.fcntl(self.fd, _F_SETLEASE, fcntl.F_UNLCK)
        os.close(self.fd)


@contextlib.contextmanager
def held(path: Path) -> Iterator[Held]:
    """Hold an existing file (see Held) for the length of the block."""
    h = Held(path)
    try:
        yield h
    finally:
        h.close()


def _open_existing(path: Path) -> int:
    """Open for reading: never through a symlink put there since, never blocking on a FIFO
    (only on another writer's lease, which lasts milliseconds)."""
    try:
        return os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except BlockingIOError:  # leased: a blocking open waits for the holder to let go
        return os.open(path, os.O_RDONLY | _NOFOLLOW)


def _lease(fd: int) -> bool:
    """Take a write lease on `fd` (Linux). False where leases are not available."""
    if fcntl is None or not sys.platform.startswith("linux"):
        return False
    import signal

    try:
        # A lease break is announced by a signal, SIGIO by default, which would end the
        # process: ask for SIGURG instead (ignored unless handled); we poll the lease state.
        fcntl.fcntl(fd, _F_SETSIG, signal.SIGURG)
    except OSError:
        return False
    for _ in range(_LEASE_TRIES):
        try:
            fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_WRLCK)
        except BlockingIOError:  # open elsewhere right now
            time.sleep(0.005)
            continue
        except OSError:  # not our file, leases disabled, a file system without them
            return False
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETOWN, 0)  # and no signal at all
        return True
    return False


def _changed(path: Path) -> ConflictError:
    return ConflictError(
        f"{path.name} changed while Engram was writing it; nothing was written",
        "read the note again (its hash changed) and retry",
    )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@contextlib.contextmanager
def name_errors(path: Path) -> Iterator[None]:
    """A name the file system refuses becomes InvalidInputError, not a crash; an error
    that names no file (a full disk on write or fsync) or only our temporary file names
    `path`, the file a person asked to write."""
    try:
        yield
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise InvalidInputError(
                f"{path.name!r}: the name is too long for this file system",
                "use a shorter name",
            ) from None
        ours = exc.filename is None or Path(str(exc.filename)).name.startswith(TEMP_PREFIX)
        if exc.errno is not None and ours:
            exc.filename, exc.filename2 = str(path), None
        raise


def fsync_dir(folder: Path) -> None:
    """Make renames in `folder` durable (best effort: not every OS can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
