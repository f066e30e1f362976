"""The Convex functions' own tests (vitest + convex-test) and the loopback double's tests,
run from pytest so one test command covers the whole project."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(
    shutil.which("npm") is None or not (ROOT / "node_modules" / "convex-test").is_dir(),
    reason="needs Node.js and `npm ci` at the repo root (scripts/install.sh does both)",
)
def test_convex_functions_and_double() -> None:
    proc = subprocess.run(["npm", "test"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    summary = re.findall(r"(\d+) passed, (\d+) failed", proc.stdout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert summary and int(summary[-1][0]) >= 30 and summary[-1][1] == "0"
