"""The single-file write path (vault/atomic.py) against an editor saving at the worst moment."""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.errors import ConflictError
from engram.vault import atomic
from engram.vault.fsio import sha256_hex

OURS = b"engram's version\n"
THEIRS = b"the person's version, saved in place\n"


@pytest.fixture(params=["lease and exchange", "neither"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Linux's lease + atomic exchange, and the path for systems that have neither."""
    if request.param == "neither":
        monkeypatch.setattr(atomic, "_lease", lambda fd: False)
        monkeypatch.setattr(atomic, "exchange", lambda a, b: False)
    return str(request.param)


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if atomic.is_temp(p.name))


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "note.md"
    path.write_bytes(b"as read\n")
    return path


def at_swap(monkeypatch: pytest.MonkeyPatch, act: Callable[[], None]) -> list[float]:
    """Run `act` in another thread right after the final check, before the swap (the moment
    a plain check-then-rename loses an edit): wait until it is done or blocked (leased)."""
    real_exchange, real_link = atomic.exchange, atomic.os.link
    finished: list[float] = []

    def editor() -> None:
        act()
        finished.append(time.monotonic())

    def inject() -> None:
        if finished or getattr(inject, "started", False):
            return
        inject.started = True  # type: ignore[attr-defined]
        t = threading.Thread(target=editor, daemon=True)
        t.start()
        t.join(0.3)  # done, or held back by our lease until we let go

    def exchange(a: Any, b: Any) -> bool:
        inject()
        return real_exchange(a, b)

    def link(a: Any, b: Any, **kw: Any) -> None:
        inject()
        real_link(a, b, **kw)

    monkeypatch.setattr(atomic, "exchange", exchange)
    monkeypatch.setattr(atomic.os, "link", link)
    return finished


def in_place(path: Path, data: bytes) -> Callable[[], None]:
    """An editor's save as Obsidian does it: truncate and write the same file."""

    def save() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    return save


def wait_for(finished: list[float]) -> None:
    deadline = time.monotonic() + 5
    while not finished and time.monotonic() < deadline:
        time.sleep(0.01)
    assert finished, "the editor never got to save"


def test_an_in_place_save_just_before_the_swap_is_kept(
    note: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = sha256_hex(note.read_bytes())
    finished = at_swap(monkeypatch, in_place(note, THEIRS))
    with pytest.raises(ConflictError):
        atomic.write_file(note, OURS, expected)
    wait_for(finished)
    assert note.read_bytes() == THEIRS
    assert temps(note.parent) == []


def test_a_save_by_rename_just_before_the_swap_is_kept(
    note: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vim, VS Code and others save to a new file and rename it over the note."""
    expected = sha256_hex(note.read_bytes())

    def save() -> None:
        side = note.with_name("note.md~")
        side.write_bytes(THEIRS)
        os.replace(side, note)

    finished = at_swap(monkeypatch, save)
    with pytest.raises(ConflictError):
        atomic.write_file(note, OURS, expected)
    wait_for(finished)
    assert note.read_bytes() == THEIRS


def test_no_save_means_the_write_goes_through(note: Path, mode: str) -> None:
    note.chmod(0o640)
    sha = atomic.write_file(note, OURS, sha256_hex(note.read_bytes()))
    assert note.read_bytes() == OURS and sha == sha256_hex(OURS)
    assert note.stat().st_mode & 0o777 == 0o640  # the note keeps its mode
    assert temps(note.parent) == []


def test_preconditions(note: Path, mode: str) -> None:
    with pytest.raises(ConflictError):
        atomic.write_file(note, OURS, "0" * 64)  # changed since read
    with pytest.raises(ConflictError):
        atomic.write_file(note, OURS, "")  # must not exist
    with pytest.raises(ConflictError):
        atomic.write_file(note.with_name("gone.md"), OURS, "0" * 64)  # deleted since read
    assert note.read_bytes() == b"as read\n"
    atomic.write_file(note, OURS)  # None: Engram's own files, whatever is there
    assert note.read_bytes() == OURS
    new = note.with_name("new.md")
    atomic.write_file(new, OURS, "")
    assert new.read_bytes() == OURS and temps(note.parent) == []


def test_a_symlink_put_in_place_of_the_note_is_not_written_through(
    tmp_path: Path, note: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"as read\n")
    note.unlink()
    note.symlink_to(outside)
    with pytest.raises(ConflictError):
        atomic.write_file(note, OURS, sha256_hex(b"as read\n"))
    assert outside.read_bytes() == b"as read\n"


def test_temporary_names_are_short_whatever_the_note_is_called(tmp_path: Path) -> None:
    name = "長" * 84 + ".md"  # 255 bytes: the longest name most file systems allow
    path = tmp_path / name
    atomic.write_file(path, b"one\n", "")
    atomic.write_file(path, b"two\n", sha256_hex(b"one\n"))
    assert path.read_bytes() == b"two\n"
    assert len(atomic.temp_name(tmp_path).name.encode()) <= 24


@pytest.fixture
def lease_probe(tmp_path: Path) -> Iterator[bool]:
    """Whether this machine grants leases (the guarantee docs/notes.md gives on Linux)."""
    path = tmp_path / "probe"
    path.write_bytes(b"x")
    fd = os.open(path, os.O_RDONLY)
    try:
        yield atomic._lease(fd)
    finally:
        os.close(fd)


def test_linux_takes_the_lease(lease_probe: bool) -> None:
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("leases are Linux only")
    assert lease_probe


def test_a_name_the_file_system_refuses_is_invalid_input_not_a_crash(tmp_path: Path) -> None:
    from engram.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="too long for this file system"):
        atomic.write_file(tmp_path / ("a" * 256 + ".md"), b"x", "")
    assert temps(tmp_path) == []


def test_write_if_changed_streams_pieces_and_leaves_an_equal_file_alone(tmp_path: Path) -> None:
    target = tmp_path / "state" / "index.json"
    pieces = [b'{"a": ', b"1", b"}\n"]
    assert atomic.write_if_changed(target, iter(pieces))
    assert target.read_bytes() == b"".join(pieces)
    before = target.stat()
    assert not atomic.write_if_changed(target, iter(pieces))  # same bytes: not rewritten
    after = target.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert atomic.write_if_changed(target, iter([b"{}", b"\n"]))
    assert target.read_bytes() == b"{}\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["index.json"]  # no temp left


@settings(max_examples=200, deadline=None)
@given(
    old=st.none() | st.binary(max_size=40),
    kept=st.integers(0, 40),
    tail=st.binary(max_size=20),
    cuts=st.lists(st.integers(0, 60), max_size=6),
)
def test_write_if_changed_leaves_exactly_the_new_bytes(
    tmp_path_factory: pytest.TempPathFactory,
    old: bytes | None,
    kept: int,
    tail: bytes,
    cuts: list[int],
) -> None:
    """Whatever the old file, and wherever the pieces are cut (the first difference early,
    late, or past the end of either), the file ends up holding the new bytes, is rewritten
    only when they differ, and no temporary file is left. The new bytes start as the old ones
    do for a while (`kept`), so the equal start is copied from the old file."""
    new = (old or b"")[:kept] + tail
    folder = tmp_path_factory.mktemp("w")
    target = folder / "graph-index.json"
    if old is not None:
        target.write_bytes(old)
    before = target.stat() if old is not None else None
    bounds = [0, *sorted(min(c, len(new)) for c in cuts), len(new)]
    pieces = [new[a:b] for a, b in itertools.pairwise(bounds)]
    assert atomic.write_if_changed(target, iter(pieces)) == (old != new)
    assert target.read_bytes() == new
    assert [p.name for p in folder.iterdir()] == ["graph-index.json"]
    if old == new:
        assert before is not None and target.stat().st_ino == before.st_ino


def test_write_if_changed_leaves_the_old_file_when_the_pieces_fail(tmp_path: Path) -> None:
    target = tmp_path / "index.json"
    target.write_bytes(b"old\n")

    def broken() -> Iterator[bytes]:
        yield b"new"
        raise RuntimeError("the graph could not be read")

    with pytest.raises(RuntimeError):
        atomic.write_if_changed(target, broken())
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["index.json"]
