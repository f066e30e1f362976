"""All-or-nothing vault writes (vault/journal.py, vault/atomic.py) on real files."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from engram.errors import ConflictError
from engram.vault import atomic, journal
from engram.vault.fsio import UnsafePathError, sha256_hex
from engram.vault.journal import Change


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
    journal.commit(
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
        journal.commit(vault, [good, bad])
    assert tree(vault) == before


def test_paths_outside_the_vault_are_refused(vault: Path) -> None:
    with pytest.raises(UnsafePathError):
        journal.commit(vault, [Change("../escape.md", b"x", "")])
    assert not (vault.parent / "escape.md").exists()


def test_a_failure_midway_rolls_back_what_was_done(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(vault)
    real_exchange = atomic.exchange
    calls = {"n": 0}

    def flaky(a: Any, b: Any) -> bool:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real_exchange(a, b)

    monkeypatch.setattr(atomic, "exchange", flaky)
    with pytest.raises(OSError, match="disk full"):
        journal.commit(
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
    real_rename = os.rename

    def flaky(src: Any, dst: Any) -> None:
        if Path(src) == vault / "three.md":
            raise PermissionError("read-only folder")
        real_rename(src, dst)

    monkeypatch.setattr(atomic.os, "rename", flaky)
    with pytest.raises(PermissionError):
        journal.commit(
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

    monkeypatch.setattr(atomic.os, "link", no_links)
    journal.commit(vault, [Change("Z/two.md", None, sha(vault, "two.md"), source="two.md")])
    assert (vault / "Z" / "two.md").read_text() == "two\n" and not (vault / "two.md").exists()


LOCKS = Path("/proc/locks")


def waiting_for_lock(path: Path, thread: threading.Thread) -> None:
    """Until `thread` waits for a flock on `path`: Linux lists a waiting request with `->`
    in /proc/locks (elsewhere a pause is the best there is)."""
    if not LOCKS.exists():
        time.sleep(0.2)
        assert thread.is_alive()
        return
    inode = f":{path.stat().st_ino} "
    deadline = time.monotonic() + 10
    while not any("->" in x and "FLOCK" in x and inode in x for x in LOCKS.read_text().split("\n")):
        assert thread.is_alive() and time.monotonic() < deadline, "the writer never waited"
        time.sleep(0.01)


def test_a_writer_holding_the_lock_makes_the_next_one_see_its_change(vault: Path) -> None:
    """Two Engram writers on one note: the second waits for the first, then sees a new hash."""
    seen = sha(vault, "two.md")
    errors: list[Exception] = []
    with open(vault / "two.md", "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)

        def second() -> None:
            try:
                journal.commit(vault, [Change("two.md", b"second\n", seen)])
            except Exception as exc:
                errors.append(exc)

        thread = threading.Thread(target=second)
        thread.start()
        waiting_for_lock(vault / "two.md", thread)
        (vault / "two.md").write_bytes(b"first\n")  # the lock holder's write
    thread.join(5)
    assert (vault / "two.md").read_bytes() == b"first\n"
    assert len(errors) == 1 and isinstance(errors[0], ConflictError)


def test_snapshot_says_why_a_file_is_not_text(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_bytes(b"a\x00b")
    (tmp_path / "u.md").write_bytes(b"caf\xe9")
    (tmp_path / "bom.md").write_bytes("\ufeffhi".encode())
    assert atomic.snapshot(tmp_path / "b.md").why == "it is a binary file"
    assert "UTF-8" in (atomic.snapshot(tmp_path / "u.md").why or "")
    bom = atomic.snapshot(tmp_path / "bom.md")
    assert bom.text == "hi" and bom.bom and bom.encode("ho") == "\ufeffho".encode()


# -- crashes: a real process killed (SIGKILL) after N renames, then `recover` -------------

CRASH = """
import base64, json, sys
from pathlib import Path
from engram.vault import atomic, journal
args = json.loads(sys.argv[1])
if args["no_exchange"]:
    atomic.exchange = lambda a, b: False
journal.crash_after(args["n"])
changes = [
    journal.Change(c[0], None if c[1] is None else base64.b64decode(c[1]), c[2], c[3])
    for c in args["changes"]
]
journal.commit(Path(args["root"]), changes, "test write")
"""


def crashing_commit(root: Path, changes: list[Change], n: int, no_exchange: bool = False) -> None:
    """Commit `changes` in a child process that SIGKILLs itself after `n` renames."""
    import base64
    import json
    import subprocess
    import sys

    encode = base64.b64encode
    spec = [
        [c.path, None if c.data is None else encode(c.data).decode(), c.expected, c.source]
        for c in changes
    ]
    args = {"root": str(root), "n": n, "no_exchange": no_exchange, "changes": spec}
    proc = subprocess.run([sys.executable, "-c", CRASH, json.dumps(args)], capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()
    assert list((root / journal.JOURNAL_DIR).glob("*.json")), "the intent was not recorded"


def four_changes(vault: Path) -> list[Change]:
    """A rewrite, a new note, a move with new text and a plain move: 5 renames."""
    return [
        Change("two.md", b"TWO\n", sha(vault, "two.md")),
        Change("B/new.md", b"new\n", ""),
        Change("C/one.md", b"ONE\n", sha(vault, "A/one.md"), source="A/one.md"),
        Change("D/three.md", None, sha(vault, "three.md"), source="three.md"),
    ]


ALL_NEW = {"B/new.md": b"new\n", "C/one.md": b"ONE\n", "D/three.md": b"three\n", "two.md": b"TWO\n"}


def files(root: Path) -> dict[str, bytes]:
    """The vault's files, Engram's journal folder aside; fails on a temporary file."""
    got = {k: v for k, v in tree(root).items() if not k.startswith(".engram/")}
    assert [k for k in got if atomic.is_temp(Path(k).name)] == []
    return got


@pytest.mark.parametrize("no_exchange", [False, True], ids=["exchange", "emulated"])
@pytest.mark.parametrize("n", range(6))
def test_a_write_killed_after_any_rename_is_finished_by_the_next_process(
    vault: Path, n: int, no_exchange: bool
) -> None:
    crashing_commit(vault, four_changes(vault), n, no_exchange)
    [done] = journal.recover(vault)
    assert done.outcome == "finished" and done.changed == () and done.kept == ()
    assert files(vault) == ALL_NEW
    assert list((vault / journal.JOURNAL_DIR).iterdir()) == []
    assert journal.recover(vault) == []


def test_a_note_a_person_changed_before_recovery_is_kept_and_the_rest_undone(
    vault: Path,
) -> None:
    before = tree(vault)
    crashing_commit(vault, four_changes(vault), 2)  # two.md and B/new.md done
    (vault / "A" / "one.md").write_bytes(b"one, edited by a person\n")  # not yet moved
    [done] = journal.recover(vault)
    assert done.outcome == "undone" and done.changed == ("A/one.md",)
    assert files(vault) == {**before, "A/one.md": b"one, edited by a person\n"}


def test_a_person_edit_on_top_of_engrams_version_is_never_undone(vault: Path) -> None:
    before = tree(vault)
    crashing_commit(vault, four_changes(vault), 2)
    (vault / "two.md").write_bytes(b"TWO, and more by a person\n")  # after Engram wrote it
    (vault / "A" / "one.md").write_bytes(b"one, edited by a person\n")
    [done] = journal.recover(vault)
    assert done.outcome == "undone"  # what can be: two.md is the person's now
    assert set(done.changed) == {"two.md", "A/one.md"}
    assert files(vault) == {
        **before,
        "two.md": b"TWO, and more by a person\n",
        "A/one.md": b"one, edited by a person\n",
    }


def test_an_operation_still_running_is_left_alone(vault: Path) -> None:
    folder = vault / journal.JOURNAL_DIR
    folder.mkdir(parents=True)
    live = folder / "1-abc.json"
    live.write_text('{"version": 1, "label": "running", "steps": []}')
    with open(live, "rb") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # as the writing process holds it
        assert journal.recover(vault) == []
        assert journal.pending(vault) == ["running"]
    assert [r.label for r in journal.recover(vault)] == ["running"]
    assert journal.pending(vault) == []
