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
# The Obsidian Help vault in German, one note per line (shared/ sits beside the checkout).
HELP_CORPUS = ROOT.parent / "shared" / "bench" / "xling-de" / "corpus.jsonl"
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))


def missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    if not CHROMIUM.is_file():
        return f"needs Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    if shutil.which("npm") is None or not (PLUGIN / "node_modules").is_dir():
        return "needs Node.js and `npm ci` in obsidian-plugin/ (scripts/install.sh does both)"
    return None


def _env() -> dict[str, str]:
    python_path = os.pathsep.join(
        p for p in (str(ROOT / "backend"), os.environ.get("PYTHONPATH")) if p
    )
    return {
        **os.environ,
        "ENGRAM_E2E_BACKEND": f'"{sys.executable}" -m engram',
        "PYTHONPATH": python_path,
        "CHROMIUM_PATH": str(CHROMIUM),
    }


@pytest.mark.skipif(missing() is not None, reason=missing() or "")
def test_plugin_in_chromium_against_engram_serve() -> None:
    env = _env()
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


@pytest.mark.skipif(missing() is not None, reason=missing() or "")
@pytest.mark.skipif(
    not os.environ.get("ENGRAM_E2E_VAULT") and not HELP_CORPUS.is_file(),
    reason=f"needs a vault to copy: ENGRAM_E2E_VAULT, or {HELP_CORPUS}",
)
def test_plugin_views_on_a_real_vault() -> None:
    """Recall, fact panel, related notes and status on a copy of a real vault, as a person
    sees them (obsidian-plugin/e2e/views.mjs): no markdown in rows, one backlink row per note,
    related notes within 1 s of switching notes, empty states with their hint."""
    proc = subprocess.run(
        ["npm", "run", "e2e:views"],
        cwd=PLUGIN,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=400,
    )
    out = proc.stdout + proc.stderr
    summary = re.findall(r"^(\d+) passed, (\d+) failed", proc.stdout, flags=re.MULTILINE)
    assert summary, f"no summary line in the views output:\n{out[-4000:]}"
    passed, failed = (int(n) for n in summary[-1])
    assert proc.returncode == 0 and failed == 0, out[-4000:]
    assert passed >= 14, out[-4000:]
    assert re.search(r"related notes after switching notes .*max \d+ ms", proc.stdout), out[-4000:]
