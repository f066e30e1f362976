"""`engram search` against `qmd search` as whole commands on the same vault (issue 20 item 5).

Both index the same folder of markdown notes beforehand (engram: `engram collection add`,
qmd: `qmd collection add`); each run here is one whole process per tool, run alternately, and
the median of `--runs` wall times is printed for each, with the machine's load.

    python scripts/bench_cli_vs_qmd.py --engram-env DIR --qmd QMD --qmd-home DIR [--runs 10]

`--engram-env DIR` holds engram's XDG data/config/cache dirs (DIR/data, DIR/config,
DIR/cache); `--qmd QMD` is the qmd launcher (run with the `node` found on PATH, Node 22 for
qmd 2.8.3); `--qmd-home DIR` is the HOME qmd keeps its index and config in.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = [
    "cholesterol breast cancer",
    "vitamin D deficiency",
    "stem cell differentiation",
    "antibiotic resistance bacteria",
    "DNA methylation aging",
]


def wall(cmd: list[str], env: dict[str, str]) -> float:
    """Milliseconds one command takes, output discarded; it must succeed."""
    t = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


def main() -> None:
    """Alternate the two commands and print both medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--engram-env", type=Path, required=True)
    ap.add_argument("--qmd", type=Path, required=True)
    ap.add_argument("--qmd-home", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    # as an installed package runs: with bytecode caches (the warm-up run writes them)
    env_e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env_e |= {
        "PYTHONPYCACHEPREFIX": str(args.engram_env / "pycache"),
        "XDG_DATA_HOME": str(args.engram_env / "data"),
        "XDG_CONFIG_HOME": str(args.engram_env / "config"),
        "XDG_CACHE_HOME": str(args.engram_env / "cache"),
    }
    home = args.qmd_home
    env_q = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }
    engram_cmd = [sys.executable, "-m", "engram", "search"]
    qmd_cmd = [str(args.qmd), "search"]
    for cmd, env in ((engram_cmd, env_e), (qmd_cmd, env_q)):
        wall([*cmd, QUERIES[0], "-n", "5"], env)  # first runs write caches (bytecode, JIT)
    times: dict[str, list[float]] = {"engram": [], "qmd": []}
    load = [os.getloadavg()[0]]
    for i in range(args.runs):
        q = QUERIES[i % len(QUERIES)]
        pair = [("engram", engram_cmd, env_e), ("qmd", qmd_cmd, env_q)]
        for name, cmd, env in pair if i % 2 == 0 else pair[::-1]:
            times[name].append(wall([*cmd, q, "-n", "5"], env))
        load.append(os.getloadavg()[0])
    e, m = statistics.median(times["engram"]), statistics.median(times["qmd"])
    print(
        f"whole-command search, median of {args.runs} alternating runs: engram {e:.0f} ms "
        f"(range {min(times['engram']):.0f}-{max(times['engram']):.0f}), qmd {m:.0f} ms "
        f"(range {min(times['qmd']):.0f}-{max(times['qmd']):.0f}); engram/qmd = {e / m:.2f}; "
        f"load average {min(load):.1f}-{max(load):.1f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
