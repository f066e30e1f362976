"""Reading a note that an editor rewrites in place while we read it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.vault import fsio


def test_a_note_saved_in_place_during_the_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = tmp_path / "n.md"
    note.write_text("# Old\n\nhalf-saved state\n", encoding="utf-8")
    real_fstat = os.fstat
    calls = 0

    def fstat_while_saving(fd: int) -> os.stat_result:
        nonlocal calls
        calls += 1
        if calls == 2:  # between the first read and its check: the editor saves in place
            with note.open("r+b") as fh:
                fh.truncate(0)
                fh.write(b"# New\n\nthe whole saved note, longer than before\n")
            os.utime(note, ns=(1, 1))
        return real_fstat(fd)

    monkeypatch.setattr(fsio.os, "fstat", fstat_while_saving)
    read = fsio.read_note(note, max_bytes=1_000)
    assert read.text == "# New\n\nthe whole saved note, longer than before\n"
    assert calls >= 4  # read twice, each checked before and after


@pytest.mark.parametrize("limit", [None, 10_000])
def test_a_quiet_note_is_read_once(tmp_path: Path, limit: int | None) -> None:
    note = tmp_path / "n.md"
    note.write_bytes(b"x" * 5_000)
    assert fsio.read_note(note, max_bytes=limit).data == b"x" * 5_000


def test_a_note_over_the_limit_is_still_refused(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_bytes(b"x" * 5_000)
    with pytest.raises(ValueError, match="limit"):
        fsio.read_note(note, max_bytes=100)
