"""Kill points: `engram note move` of a hub linked by 200 notes, SIGKILLed for real.

`ENGRAM_TEST_CRASH_AFTER_RENAMES=N` makes the writing process kill itself (SIGKILL) once N
files are renamed into place: before the first, midway, after the last. Then any command
that opens the index runs (in this process), and the vault must be all-old or all-new with
no temporary file left, the index agreeing with the files.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram import config
from engram.service import Engram
from engram.store import admin
from tests.conftest import EngramCli

NOTES = 200
HUB = "Hubs/Hub Note.md"
MOVED = "Hub Renamed.md"


def killed(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run a command with a crash point in a process of its own (it SIGKILLs itself)."""
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def tree(root: Path) -> dict[str, bytes]:
    """Every file but Engram's own state folder."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".engram/")
    }


@pytest.fixture
def vault(tmp_path: Path, xdg: dict[str, str]) -> Path:
    root = tmp_path / "vault"
    (root / "Hubs").mkdir(parents=True)
    (root / "Notes").mkdir()
    (root / HUB).write_text("# Hub Note\n\nEverything links here.\n", encoding="utf-8")
    for i in range(NOTES):
        text = f"# Note {i}\n\nSee [[Hub Note]] and [[Hub Note#Heading|the hub]].\n"
        (root / "Notes" / f"Note {i}.md").write_text(text, encoding="utf-8")
    with Engram(config.resolve(os.environ)) as e:
        e.collection_add(str(root), "v")
        e.update()
    return root


def all_new(old: dict[str, bytes]) -> dict[str, bytes]:
    new = {rel: data.replace(b"[[Hub Note", b"[[Hub Renamed") for rel, data in old.items()}
    new[MOVED] = new.pop(HUB)
    return new


def index_agrees(root: Path) -> None:
    """Every file is indexed with its current hash, and nothing else is."""
    with Engram(config.resolve(os.environ)) as e:
        conn = e.db.conn
        indexed = {rel: admin.document_by_path(conn, "v", rel)["hash"] for rel in tree(root)}
        assert indexed == {
            rel: hashlib.sha256(data).hexdigest() for rel, data in tree(root).items()
        }
        assert admin.document_by_path(conn, "v", HUB if (root / MOVED).exists() else MOVED) is None


def leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob(".engram-*")] + [
        p.name for p in (root / ".engram" / "journal").glob("*")
    ]


@pytest.mark.slow
@pytest.mark.parametrize("renames", [0, NOTES // 2, NOTES + 1])
def test_a_move_killed_at_any_point_is_all_old_or_all_new_after_the_next_command(
    run: EngramCli, vault: Path, xdg: dict[str, str], renames: int
) -> None:
    old = tree(vault)
    env = {**xdg, "ENGRAM_TEST_CRASH_AFTER_RENAMES": str(renames)}
    done = killed(env, "note", "move", HUB, MOVED, "-c", "v")
    assert done.returncode == -9, done.stderr
    assert list((vault / ".engram" / "journal").glob("*.json"))  # the intent survived
    after = run(xdg, "status")  # any command that opens the index
    assert "interrupted note move" in after.stderr  # said, not silent
    assert tree(vault) in (old, all_new(old))
    assert leftovers(vault) == []
    index_agrees(vault)


@pytest.mark.slow
def test_a_note_a_person_saved_after_the_crash_makes_the_move_undo_around_it(
    run: EngramCli, vault: Path, xdg: dict[str, str]
) -> None:
    old = tree(vault)
    env = {**xdg, "ENGRAM_TEST_CRASH_AFTER_RENAMES": str(NOTES // 2)}
    assert killed(env, "note", "move", HUB, MOVED, "-c", "v").returncode == -9
    late = vault / "Notes" / f"Note {NOTES - 1}.md"  # not rewritten yet when it died
    late.write_text("# Note\n\nA person rewrote this note: [[Hub Note]].\n", encoding="utf-8")
    doctor = run(xdg, "doctor", ok=False)
    assert "undone" in doctor.stdout + doctor.stderr
    assert tree(vault) == {**old, late.relative_to(vault).as_posix(): late.read_bytes()}
    assert leftovers(vault) == []
    index_agrees(vault)


@pytest.mark.slow
def test_the_journal_outlives_a_deleted_index(
    run: EngramCli, vault: Path, xdg: dict[str, str]
) -> None:
    """The intent is recorded in the vault, not the index: deleting the index loses nothing."""
    old = tree(vault)
    env = {**xdg, "ENGRAM_TEST_CRASH_AFTER_RENAMES": str(NOTES // 2)}
    assert killed(env, "note", "move", HUB, MOVED, "-c", "v").returncode == -9
    for index in Path(xdg["XDG_DATA_HOME"]).rglob("*.sqlite*"):
        index.unlink()
    run(xdg, "update")
    assert tree(vault) == all_new(old) and leftovers(vault) == []
    index_agrees(vault)


def test_doctor_lists_temporary_files_left_in_the_vault(vault: Path) -> None:
    (vault / "Notes" / ".engram-0a1b2c3d.tmp").write_text("half a note")
    (vault / "Notes" / ".Note 1.md.k2j4h5g6.tmp").write_text("from an older version")
    with Engram(config.resolve(os.environ)) as e:
        found = [c for c in e.doctor() if c.name == "temporary files in v"]
    assert len(found) == 1 and found[0].status == "warn"
    assert ".engram-0a1b2c3d.tmp" in found[0].detail and ".k2j4h5g6.tmp" in found[0].detail
