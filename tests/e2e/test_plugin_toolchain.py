"""The Obsidian plugin's own checks (vitest unit tests, the Obsidian linter, a production
build), run from pytest so one test command covers the whole project."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "obsidian-plugin"

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None or not (PLUGIN / "node_modules").is_dir(),
    reason="needs Node.js and `npm ci` in obsidian-plugin/ (scripts/install.sh does both)",
)


def npm(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npm", "run", *args], cwd=PLUGIN, capture_output=True, text=True, timeout=timeout
    )


def test_plugin_unit_tests_pass() -> None:
    proc = npm("test")
    summary = re.findall(r"(\d+) passed, (\d+) failed", proc.stdout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert summary and int(summary[-1][0]) > 100 and summary[-1][1] == "0"


def test_plugin_lint_has_no_errors() -> None:
    proc = npm("lint")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_plugin_production_build() -> None:
    proc = npm("build")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    bundle = PLUGIN / "main.js"
    assert bundle.stat().st_size > 10_000
    text = bundle.read_text(encoding="utf-8")
    assert "innerHTML" not in text and 'require("obsidian")' in text
