"""The convergence scenario (scripts/sync_scenario.py), small enough for every CI run: two
daemons, random interleaved edits on both vaults and in Convex with faults, then a check that
both vaults hold exactly Convex's facts, none lost, none doubled."""

from __future__ import annotations

import subprocess
import sys

from tests.integration.sync.conftest import ROOT, Double


def test_random_edits_on_every_side_converge(double: Double) -> None:
    # `double` only proves Node and the double's packages are there; the script starts its own
    proc = subprocess.run(
        [sys.executable, "scripts/sync_scenario.py", "--steps", "120", "--seed", "11"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("PASS"), (
        proc.stdout[-4000:] + proc.stderr[-4000:]
    )
    assert "fault" in proc.stdout and "remote_edit" in proc.stdout
