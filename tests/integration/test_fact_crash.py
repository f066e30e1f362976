"""Kill points in `engram fact add`, SIGKILLed for real: every fact whose note was stored has
its ledger line (exactly once) and its daily-note entry after one later command.

`ENGRAM_TEST_CRASH_AFTER_RENAMES=N` kills the process once a write has renamed N files into
place (0: before its note, 1: right after it, 2: after the ledger, 3: after the daily note);
the random kills land anywhere in a run, start-up included. The commands that are killed, and
the clean one that times them, run in processes of their own; the later command in this one.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from engram import config
from engram.service import Engram
from tests.conftest import EngramCli

RANDOM_KILLS = 12
GENERATED = ("daily", "ledger", "archive")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "engram", *args]


def run_process(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args), env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )


def killed_after(env: dict[str, str], seconds: float, *args: str) -> int:
    """Start the command and SIGKILL it after `seconds` (if it still runs); its exit code."""
    proc = subprocess.Popen(
        command(*args),
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    return proc.wait()  # reaped: a zombie would still look alive to the next process


def stored_facts(root: Path) -> dict[str, str]:
    """First 8 of the id -> vault path, for every fact note in the vault."""
    out = {}
    for path in (root / "Engram").rglob("*.md"):
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[1] in GENERATED:
            continue
        found = re.search(r"^id: ([0-9a-f]{32})$", path.read_text("utf-8"), re.M)
        assert found, f"{rel} has no id"
        out[found.group(1)[:8]] = rel
    return out


def ledger_lines(root: Path) -> Counter[str]:
    """How many ledger lines name each fact."""
    found: Counter[str] = Counter()
    for path in (root / "Engram" / "ledger" / "observations").rglob("*.md"):
        found.update(re.findall(r"\^fact-([0-9a-f]{8})$", path.read_text("utf-8"), re.M))
    return found


def daily_links(root: Path) -> str:
    return "".join(p.read_text("utf-8") for p in (root / "Engram" / "daily").glob("*.md"))


@pytest.fixture
def vault(tmp_path: Path, xdg: dict[str, str]) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Plans.md").write_text("# Plans\n\nThe launch is in June.\n", encoding="utf-8")
    with Engram(config.resolve(os.environ)) as e:
        e.init_vault(str(root))
    return root


@pytest.mark.slow
def test_a_fact_add_killed_anywhere_has_its_ledger_line_after_the_next_command(
    run: EngramCli, vault: Path, xdg: dict[str, str]
) -> None:
    for renames in (0, 1, 2, 3):
        env = {**xdg, "ENGRAM_TEST_CRASH_AFTER_RENAMES": str(renames)}
        done = run_process(env, "fact", "add", f"We decided crash point {renames} is fine")
        assert done.returncode in (0, -signal.SIGKILL), done.stderr
    started = time.monotonic()
    assert run_process(xdg, "fact", "add", "A clean run, to time one").returncode == 0
    took = time.monotonic() - started
    rng = random.Random(9)
    codes = [
        killed_after(xdg, rng.uniform(0.3, 1.0) * took, "fact", "add", f"Random kill {i}")
        for i in range(RANDOM_KILLS)
    ]
    later = run(xdg, "fact", "list", "-n", "100")  # one later command that reads memory
    facts = stored_facts(vault)
    killed = sum(c == -signal.SIGKILL for c in codes)
    print(f"\n{killed} of {RANDOM_KILLS} random runs killed; {len(facts)} facts stored")
    assert len(facts) >= 4  # some kills came after the note was stored
    lines = ledger_lines(vault)
    assert {ref: lines[ref] for ref in facts} == dict.fromkeys(facts, 1)
    days = daily_links(vault)
    assert [rel for rel in facts.values() if rel.removesuffix(".md") not in days] == []
    assert all(ref in later.stdout for ref in facts)  # and every one is indexed
