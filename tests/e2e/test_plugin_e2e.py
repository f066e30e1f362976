"""The Obsidian plugin end to end: its production main.js in headless Chromium against the real
`engram serve` of this checkout (this interpreter, this `backend/`), on a temporary vault.

The steps and their timings are in obsidian-plugin/e2e/run.mjs; this test runs it and checks
its `N passed, N failed` line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "obsidian-plugin"
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))


def missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    if not CHROMIUM.is_file():
        return f"needs Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    if shutil.which("npm") is None or not (PLUGIN / "node_modules").is_dir():
        return "needs Node.js and `npm ci` in obsidian-plugin/ (scripts/install.sh does both)"
    return None


@pytest.mark.skipif(missing() is not None, reason=missing() or "")
def test_plugin_in_chromium_against_engram_serve() -> None:
    python_path = os.pathsep.join(
        p for p in (str(ROOT / "backend"), os.environ.get("PYTHONPATH")) if p
    )
    env = {
        **os.environ,
        "ENGRAM_E2E_BACKEND": f'"{sys.executable}" -m engram',
        "PYTHONPATH": python_path,
        "CHROMIUM_PATH": str(CHROMIUM),
    }
    proc = subprocess.run(
        ["npm", "run", "e2e"], cwd=PLUGIN, env=env, capture_output=True, text=True, timeout=300
    )
    out = proc.stdout + proc.stderr
    summary = re.findall(r"^(\d+) passed, (\d+) failed", proc.stdout, flags=re.MULTILINE)
    assert summary, f"no summary line in the e2e output:\n{out[-4000:]}"
    passed, failed = (int(n) for n in summary[-1])
    assert proc.returncode == 0 and failed == 0, out[-4000:]
    assert passed >= 17, out[-4000:]  # every step ran (a skipped step is not a pass)
    shots = re.search(r"screenshots in (\S+)", proc.stdout)
    assert shots and len(list(Path(shots[1]).glob("*.png"))) >= 6
