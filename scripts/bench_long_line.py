"""The graph commands on a note of 10,000 links on one ~1 MB line, as whole CLI processes
(issue 30 item 2: each ≤ 1 s end to end, no daemon).

Builds the vault of tests/integration/test_hostile_links.py (Hub, Other, and Long with the
links on its third line), indexes it with `engram collection add`, then runs `engram graph
links Long`, `graph backlinks Hub` and `graph unresolved`, plain and `--json`, one process
each, in turn, output read through a pipe. Prints each command's time on the clock and of CPU
(median and range of `--runs`; CPU time is what a busy machine does not inflate) and the load
average. Bytecode caches are written by a first run and used after, as an installed package
runs; `--no-bytecode` compiles engram's modules in every process, as the tests run them.

    python scripts/bench_long_line.py [--runs 7] [--keep DIR] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINKS = 10_000
FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod"
COMMANDS = (("links", "Long"), ("backlinks", "Hub"), ("unresolved",))


def link(i: int) -> str:
    """The i-th link: to Hub, to a heading of Hub, to nowhere, markdown (as the test has)."""
    return ("[[Hub]]", f"[[Hub#Section|alias {i}]]", f"[[Missing {i}]]", "[see](Hub.md)")[i % 4]


def write_vault(root: Path) -> None:
    """Hub, a note linking to it once, and Long with 10,000 links on its third line."""
    (root / ".obsidian").mkdir(parents=True)
    (root / "Hub.md").write_text("# Hub\n\n## Section\n\nThe hub.\n")
    (root / "Other.md").write_text("# Other\n\nsee [[Hub]] and [[Nowhere]]\n")
    line = " ".join(f"{FILLER} m{i}x {link(i)}" for i in range(LINKS))
    (root / "Long.md").write_text(f"# Long\n\n{line}\n")


def run(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Seconds one `engram` process takes on the clock and of CPU, and the bytes it printed;
    it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "engram", *args], env=env, stdout=subprocess.PIPE, check=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, len(done.stdout)


def main() -> None:
    """Build and index the vault, then time each command `--runs` times."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--keep", type=Path, help="Work in this (new) folder and keep it.")
    ap.add_argument("--no-bytecode", action="store_true", help="Compile on every run.")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="engram-long-line-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {
        "XDG_DATA_HOME": str(work / "data"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "XDG_CACHE_HOME": str(work / "cache"),
        "ENGRAM_EMBED_MODEL": "none",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PYTHONPYCACHEPREFIX": str(work / "pycache"),
        "NO_COLOR": "1",
    }
    if args.no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX")
    vault = work / "vault"
    if not vault.exists():
        write_vault(vault)
        took, _, _ = run(["collection", "add", str(vault), "--name", "v"], env)
        print(f"collection add (indexes the vault): {took:.2f} s")
    run(["update"], env)  # also writes the bytecode caches
    load = [os.getloadavg()[0]]
    walls: dict[tuple[str, ...], list[float]] = {}
    cpus: dict[tuple[str, ...], list[float]] = {}
    size: dict[tuple[str, ...], int] = {}
    for _ in range(args.runs):
        for cmd in COMMANDS:
            for fmt in ((), ("--json",)):
                key = cmd + fmt
                wall, cpu, size[key] = run(["graph", *key], env)
                walls.setdefault(key, []).append(wall)
                cpus.setdefault(key, []).append(cpu)
        load.append(os.getloadavg()[0])
    print(f"{args.runs} runs each, bytecode caches {'off' if args.no_bytecode else 'on'}:")
    for key, w in walls.items():
        c = cpus[key]
        print(
            f"  engram graph {' '.join(key):<22} {statistics.median(w):.2f} s "
            f"({min(w):.2f}-{max(w):.2f}), CPU {statistics.median(c):.2f} s "
            f"({min(c):.2f}-{max(c):.2f}), {size[key] / 1e6:.1f} MB printed"
        )
    print(f"load average {min(load):.1f}-{max(load):.1f} on {os.cpu_count()} CPUs; work: {work}")


if __name__ == "__main__":
    main()
