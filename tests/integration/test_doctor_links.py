"""`engram doctor` resolves stored links again and reports drift; `engram update --force`
repairs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.service import Engram, upkeep
from tests.conftest import EngramCli, write_tree

VAULT = {
    "Home.md": "[[Plan]] [[Plan#Tiers]] [[Plan#^b1]] [[Ghost]] ![[img.png]]\n",
    "Projects/Plan.md": "# Plan\n\n## Tiers\n\nthree tiers ^b1\n",
    "Projects/Other.md": "[[Home]] [[./Plan]]\n",
    "img.png": b"\x89PNG\r\n\x1a\n",
}

# Damage of the kinds an indexing bug leaves behind, each as one SQL statement.
DRIFT = {
    "note id lost (issue 15)": "UPDATE links SET resolved_doc_id = NULL WHERE target = 'Plan'",
    "wrong file": "UPDATE links SET resolved_path = 'Projects/Other.md' WHERE target = 'Plan'",
    "stale heading flag": "UPDATE links SET heading_ok = 0 WHERE heading = 'Tiers'",
    "stale block flag": "UPDATE links SET block_ok = 0 WHERE block = 'b1'",
    "a stub that should resolve": "UPDATE links SET resolved_path = NULL WHERE target = 'img.png'",
    "resolved to nothing there": (
        "UPDATE links SET resolved_path = 'Ghost.md' WHERE target = 'Ghost'"
    ),
}


@pytest.fixture
def vault(engram: Engram, tmp_path: Path) -> Engram:
    root = write_tree(tmp_path / "v", VAULT)
    engram.collection_add(str(root), "v")
    engram.update()
    return engram


def link_check(e: Engram, full: bool = False) -> upkeep.Check:
    return next(c for c in e.doctor(full=full) if c.name == "links v")


@pytest.mark.parametrize("damage", DRIFT.values(), ids=DRIFT.keys())
def test_doctor_finds_drift_and_update_force_repairs_it(vault: Engram, damage: str) -> None:
    ok = link_check(vault)
    assert ok.status == "ok"
    assert "checked 7 links" in ok.detail and "all 3 notes" in ok.detail
    with vault.db.write() as conn:
        assert conn.execute(damage).rowcount >= 1
    found = link_check(vault)
    assert found.status == "fail"
    assert "resolve otherwise than stored" in found.detail
    assert "Home.md:1" in found.detail
    assert found.fix is not None and "engram update --force" in found.fix
    vault.update(force=True)
    assert link_check(vault).status == "ok"


def test_a_sample_still_sees_every_lost_note_id(
    vault: Engram, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upkeep, "LINK_SAMPLE", 1)
    with vault.db.write() as conn:
        conn.execute(DRIFT["note id lost (issue 15)"])
    for _ in range(5):  # whichever note the sample holds
        check = link_check(vault)
        assert check.status == "fail"
        assert "a sample of 1 of 3 notes" in check.detail
        assert "3 links in all point at a note id that is not the note at their path" in (
            check.detail
        )
    assert "all 3 notes" in link_check(vault, full=True).detail


def test_cli_doctor_full_and_update_force(
    run: EngramCli, vault: Engram, xdg: dict[str, str]
) -> None:
    with vault.db.write() as conn:
        conn.execute(DRIFT["stale heading flag"])
    doctor = run(xdg, "doctor", "--full", "--json", ok=False)
    assert doctor.returncode == 1, doctor.stdout
    links = next(c for c in json.loads(doctor.stdout) if c["name"] == "links v")
    assert links["status"] == "fail"
    drift = "Home.md:1 [[Plan#Tiers]]: Projects/Plan.md (heading missing) -> Projects/Plan.md "
    assert drift + "(heading found)" in links["detail"]
    assert run.json(xdg, "update", "--force")["updated"] == 3
    doctor = run(xdg, "doctor", "--json", ok=False)  # 1: no embedding model here
    after = next(c for c in json.loads(doctor.stdout) if c["name"] == "links v")
    assert after["status"] == "ok"
