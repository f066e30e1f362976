"""All-or-nothing vault writes (vault/batch.py) on real files."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from engram.errors import ConflictError
from engram.vault import batch
from engram.vault.batch import Change
from engram.vault.fsio import UnsafePathError, sha256_hex


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    (root / "A").mkdir(parents=True)
    (root / "A" / "one.md").write_text("one\n")
    (root / "two.md").write_text("two\n")
    (root / "three.md").write_text("three\n")
    return root


def sha(root: Path, rel: str) -> str:
    return sha256_hex((root / rel).read_bytes())


def test_writes_creates_and_moves_happen_together(vault: Path) -> None:
    batch.commit(
        vault,
        [
            Change("two.md", b"TWO\n", sha(vault, "two.md")),
            Change("B/new.md", b"new\n", ""),
            Change("C/one.md", b"ONE\n", sha(vault, "A/one.md"), source="A/one.md"),
            Change(".trash/three.md", None, sha(vault, "three.md"), source="three.md"),
        ],
    )
    assert tree(vault) == {
        "B/new.md": b"new\n",
        "C/one.md": b"ONE\n",
        "two.md": b"TWO\n",
        ".trash/three.md": b"three\n",
    }


@pytest.mark.parametrize(
    "bad",
    [
        Change("two.md", b"x", "0" * 64),  # changed since read
        Change("three.md", b"x", ""),  # must not exist, does
        Change("A/one.md", None, "0" * 64, source="two.md"),  # move onto an existing file
        Change("gone.md", b"x", "0" * 64),  # deleted since read
    ],
)
def test_one_failed_precondition_changes_nothing(vault: Path, bad: Change) -> None:
    before = tree(vault)
    good = Change("B/new.md", b"new\n", "")
    with pytest.raises(ConflictError):
        batch.commit(vault, [good, bad])
    assert tree(vault) == before


def test_paths_outside_the_vault_are_refused(vault: Path) -> None:
    with pytest.raises(UnsafePathError):
        batch.commit(vault, [Change("../escape.md", b"x", "")])
    assert not (vault.parent / "escape.md").exists()


def test_a_failure_midway_rolls_back_what_was_done(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(vault)
    real_replace = os.replace
    calls = {"n": 0}

    def flaky(src: Any, dst: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(batch.os, "replace", flaky)
    with pytest.raises(OSError, match="disk full"):
        batch.commit(
            vault,
            [
                Change("B/new.md", b"new\n", ""),
                Change("two.md", b"TWO\n", sha(vault, "two.md")),
                Change("three.md", b"THREE\n", sha(vault, "three.md")),
                Change("C/one.md", b"ONE\n", sha(vault, "A/one.md"), source="A/one.md"),
            ],
        )
    monkeypatch.undo()
    assert tree(vault) == before
    assert not [p for p in vault.rglob("*.tmp")]


def test_a_failure_removing_a_moved_source_restores_everything(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(vault)
    real_unlink = Path.unlink

    def flaky(self: Path, missing_ok: bool = False) -> None:
        if self == vault / "three.md":
            raise PermissionError("read-only folder")
        real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", flaky)
    with pytest.raises(PermissionError):
        batch.commit(
            vault,
            [
                Change("X/one.md", None, sha(vault, "A/one.md"), source="A/one.md"),
                Change("Y/three.md", b"3\n", sha(vault, "three.md"), source="three.md"),
            ],
        )
    monkeypatch.undo()
    assert tree(vault) == before


def test_moves_work_without_hard_links(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: Any, dst: Any) -> None:
        raise OSError("operation not permitted")

    monkeypatch.setattr(batch.os, "link", no_links)
    batch.commit(vault, [Change("Z/two.md", None, sha(vault, "two.md"), source="two.md")])
    assert (vault / "Z" / "two.md").read_text() == "two\n" and not (vault / "two.md").exists()


def test_a_writer_holding_the_lock_makes_the_next_one_see_its_change(vault: Path) -> None:
    """Two Engram writers on one note: the second waits for the first, then sees a new hash."""
    seen = sha(vault, "two.md")
    errors: list[Exception] = []
    with open(vault / "two.md", "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)

        def second() -> None:
            try:
                batch.commit(vault, [Change("two.md", b"second\n", seen)])
            except Exception as exc:
                errors.append(exc)

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.2)
        assert thread.is_alive()  # blocked on the lock
        (vault / "two.md").write_bytes(b"first\n")  # the lock holder's write
    thread.join(5)
    assert (vault / "two.md").read_bytes() == b"first\n"
    assert len(errors) == 1 and isinstance(errors[0], ConflictError)


def test_snapshot_says_why_a_file_is_not_text(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_bytes(b"a\x00b")
    (tmp_path / "u.md").write_bytes(b"caf\xe9")
    (tmp_path / "bom.md").write_bytes("\ufeffhi".encode())
    assert batch.snapshot(tmp_path / "b.md").why == "it is a binary file"
    assert "UTF-8" in (batch.snapshot(tmp_path / "u.md").why or "")
    bom = batch.snapshot(tmp_path / "bom.md")
    assert bom.text == "hi" and bom.bom and bom.encode("ho") == "\ufeffho".encode()
