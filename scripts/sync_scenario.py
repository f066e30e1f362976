"""Two vaults, two daemons, one Convex: random interleaved edits everywhere, then converge.

    python scripts/sync_scenario.py [--steps 300] [--seed 1] [--no-faults] [--keep]

Starts the loopback Convex double (our real convex/ functions in convex-test) and, for two
"machines" on this computer, a vault with its own index, config and `engram serve` (watcher
on, background sync every 5 s). Then, in random order: agents store, change and archive
facts through each daemon's API; a person edits, tags and deletes fact notes on disk;
another client writes and deletes facts in Convex directly; syncs are triggered; faults are
injected into Convex's replies (dropped connections, commits whose reply is lost, 503 with
Retry-After, a paused deployment, HTML errors, slow replies). Afterwards it syncs both sides
until quiet and checks, with `engram sync check` and its own reading of the files:

- both vaults are in step with Convex (every live fact identical, field for field);
- no fact is lost: every fact ever created is in Convex (live or as a tombstone) and every
  live one is a note in both vaults;
- none is duplicated: one note per fact id in each vault.

Prints what it did and how long convergence took; exit code 0 when every check passes.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import serve_harness

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "scenario-sync-token"
WORDS = ["alpha", "beta", "gamma", "delta", "ledger", "pricing", "deploy", "review", "budget"]
FAULTS: list[dict[str, Any]] = [
    {"kind": "close"},
    {"kind": "commit_then_drop"},
    {"kind": "status", "status": 503, "retryAfter": 0.2},
    {"kind": "status", "status": 429, "retryAfter": 0.1},
    {"kind": "html_500"},
    {"kind": "paused"},
    {"kind": "delay", "ms": 800},
]


class DoubleProc:
    """The Convex double as a child process, and its control API."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [
                "node",
                "tests/convex_double/server.mjs",
                "--port",
                "0",
                "--sync-token",
                TOKEN,
                "--exit-with-parent",
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline().split()[1])}"

    def control(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.url}/_double/{path}", data=data, method=method)
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read() or b"null")

    def facts(self) -> dict[str, dict[str, Any]]:
        return {f["externalId"]: f for f in self.control("GET", "dump")["facts"]}

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@dataclass
class Machine:
    """One computer: a vault, its environment and its daemon."""

    name: str
    work: Path
    vault: Path
    env: dict[str, str]
    server: serve_harness.Server | None = None

    def cli(self, *args: str, stdin: str | None = None) -> Any:
        proc = subprocess.run(
            [sys.executable, "-m", "engram", *args, "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            input=stdin,
            timeout=300,
        )
        if proc.returncode not in (0, 1) or not proc.stdout.strip():
            raise SystemExit(f"engram {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
        return json.loads(proc.stdout)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        assert self.server is not None
        return self.server.call(method, path, body)

    def fact_files(self) -> dict[str, list[Path]]:
        """Fact id -> the notes carrying it (conflict copies are not facts)."""
        out: dict[str, list[Path]] = {}
        for path in (self.vault / "Engram").rglob("*.md"):
            rel = path.relative_to(self.vault).as_posix()
            if "/daily/" in rel or "/ledger/" in rel or "(conflict " in path.name:
                continue
            for line in path.read_text(encoding="utf-8").splitlines()[1:4]:
                if line.startswith("id: "):
                    out.setdefault(line[4:].strip(), []).append(path)
        return out


@dataclass
class Scenario:
    """The run's state: what was done, what was created."""

    rng: random.Random
    double: DoubleProc
    machines: list[Machine]
    faults: bool
    done: Counter[str] = field(default_factory=Counter)
    created: set[str] = field(default_factory=set)
    reports: Counter[str] = field(default_factory=Counter)

    def step(self) -> None:
        kinds = [
            "add",
            "agent_edit",
            "human_edit",
            "remote_edit",
            "sync",
            "archive",
            "remote_delete",
            "human_delete",
            "fault",
            "pause",
        ]
        weights = [14, 12, 16, 10, 10, 3, 3, 2, 8 if self.faults else 0, 8]
        kind = self.rng.choices(kinds, weights)[0]
        m = self.rng.choice(self.machines)
        if getattr(self, kind)(m):
            self.done[kind] += 1

    def text(self) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(4, 9))) + "."

    def add(self, m: Machine) -> bool:
        body = {"text": self.text() + "\n\n" + self.text(), "tags": [self.rng.choice(WORDS)]}
        status, reply = m.call("POST", "/v1/facts", body)
        if status == 201:
            self.created.add(reply["fact"]["id"])
        return status == 201

    def agent_edit(self, m: Machine) -> bool:
        ids = list(m.fact_files())
        if not ids:
            return False
        change = self.rng.choice(
            [
                {"text": self.text()},
                {"tags": [self.rng.choice(WORDS)]},
                {"importance": round(self.rng.random(), 2)},
            ]
        )
        status, _ = m.call("PATCH", f"/v1/facts/{self.rng.choice(ids)}", change)
        return status == 200

    def human_edit(self, m: Machine) -> bool:
        files = [p for paths in m.fact_files().values() for p in paths]
        if not files:
            return False
        path = self.rng.choice(files)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return False
        head, sep, body = text.partition("\n---\n")
        lines = body.split("\n")
        filled = [i for i, line in enumerate(lines) if line.strip()]
        if filled and self.rng.random() < 0.5:
            i = self.rng.choice(filled)
            lines[i] += " " + self.rng.choice(WORDS)  # a word added to a line
        else:
            lines.append(self.text())  # a new line at the end
        path.write_text(head + sep + "\n".join(lines), encoding="utf-8")
        return True

    def remote_edit(self, m: Machine) -> bool:
        live = [f for f in self.double.facts().values() if f.get("deletedAt") is None]
        if not live:
            return False
        doc = self.rng.choice(live)
        fact = {
            k: doc[k]
            for k in (
                "externalId",
                "title",
                "text",
                "factType",
                "timestamp",
                "lifecycleState",
                "tags",
                "entities",
                "contradictsWith",
            )
        }
        for key in (
            "source",
            "createdBy",
            "scope",
            "updatedAt",
            "importanceScore",
            "confidence",
            "supersededBy",
            "supersedes",
            "lastEditedBy",
        ):
            if doc.get(key) is not None:
                fact[key] = doc[key]
        if self.rng.random() < 0.5:
            fact["text"] = self.text() + "\n\n" + doc["text"]
        else:
            fact["tags"] = sorted({*doc["tags"], self.rng.choice(WORDS)})
        args = {
            "opId": f"other-{self.rng.getrandbits(64):x}",
            "fact": fact,
            "baseVersion": doc["version"],
            "device": "elsewhere",
        }
        reply = self.double.control("POST", "run", {"path": "facts:upsert", "args": args})
        return bool(reply.get("status") == "success")

    def remote_delete(self, m: Machine) -> bool:
        live = [f for f in self.double.facts().values() if f.get("deletedAt") is None]
        if not live:
            return False
        args = {
            "opId": f"other-{self.rng.getrandbits(64):x}",
            "externalId": self.rng.choice(live)["externalId"],
        }
        self.double.control("POST", "run", {"path": "facts:softDelete", "args": args})
        return True

    def human_delete(self, m: Machine) -> bool:
        files = [p for paths in m.fact_files().values() for p in paths]
        if not files:
            return False
        self.rng.choice(files).unlink(missing_ok=True)
        return True

    def archive(self, m: Machine) -> bool:
        ids = list(m.fact_files())
        if not ids:
            return False
        return m.call("DELETE", f"/v1/facts/{self.rng.choice(ids)}")[0] == 200

    def sync(self, m: Machine) -> bool:
        status, reply = m.call("POST", "/v1/sync", {})
        if status == 200:
            self.reports.update(
                {
                    k: v
                    for k, v in reply["report"].items()
                    if isinstance(v, int) and k != "retries" and v
                }
            )
        return status == 200

    def fault(self, m: Machine) -> bool:
        self.double.control("POST", "fault", self.rng.choice(FAULTS))
        return True

    def pause(self, m: Machine) -> bool:
        time.sleep(self.rng.uniform(0.05, 0.6))
        return True


def start_machine(work: Path, name: str, url: str) -> Machine:
    home = work / name
    vault = home / "vault"
    vault.mkdir(parents=True)
    env = {**serve_harness.isolated_env(home), "ENGRAM_EMBED_MODEL": "none", "NO_COLOR": "1"}
    m = Machine(name, home, vault, env)
    m.cli("init", str(vault), "--name", "vault")
    m.env = {**env, "ENGRAM_SYNC_TOKEN": TOKEN}
    m.cli("sync", "init", "--url", url, "--device", name, "--interval", "5")
    m.server = serve_harness.start(vault, home, "--debounce", "0.3", watch=True)
    return m


def converge(sc: Scenario, limit: float) -> tuple[float, list[dict[str, Any]]]:
    """Sync both sides until both are in step; (seconds taken, last checks)."""
    sc.double.control("DELETE", "faults")
    started = time.monotonic()
    checks: list[dict[str, Any]] = []
    while time.monotonic() - started < limit:
        time.sleep(1.0)  # let the watchers index the last edits
        for m in sc.machines + sc.machines[:1]:
            sc.sync(m)
        checks = [m.cli("sync", "check") for m in sc.machines]
        if all(c["inStep"] for c in checks):
            return time.monotonic() - started, checks
    return time.monotonic() - started, checks


def verify(sc: Scenario, checks: list[dict[str, Any]]) -> list[str]:
    """Every check of the module docstring; the failures."""
    problems = []
    for m, check in zip(sc.machines, checks, strict=True):
        if not check["inStep"]:
            problems.append(f"{m.name} is not in step with Convex: {check}")
    remote = sc.double.facts()
    live = {fid for fid, f in remote.items() if f.get("deletedAt") is None}
    lost = sc.created - set(remote)
    if lost:
        problems.append(f"facts lost (never reached Convex): {sorted(lost)}")
    for m in sc.machines:
        files = m.fact_files()
        doubled = {fid: [str(p) for p in ps] for fid, ps in files.items() if len(ps) > 1}
        if doubled:
            problems.append(f"{m.name} has facts in several notes: {doubled}")
        missing = live - set(files)
        if missing:
            problems.append(f"{m.name} lacks live facts: {sorted(missing)}")
    return problems


def main() -> int:
    """Run the scenario; 0 when every check passes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-faults", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--converge-limit", type=float, default=180.0)
    args = parser.parse_args()
    if shutil.which("node") is None or not (ROOT / "node_modules" / "convex-test").is_dir():
        print("needs Node.js and `npm ci` at the repository root")
        return 2
    work = Path(tempfile.mkdtemp(prefix="engram-sync-scenario-"))
    double = DoubleProc()
    machines: list[Machine] = []
    try:
        machines = [start_machine(work, name, double.url) for name in ("a", "b")]
        sc = Scenario(random.Random(args.seed), double, machines, not args.no_faults)
        print(f"machine: {serve_harness.machine()}; work folder {work}")
        began = time.monotonic()
        for _ in range(args.steps):
            sc.step()
        edits_took = time.monotonic() - began
        took, checks = converge(sc, args.converge_limit)
        problems = verify(sc, checks)
        remote = double.facts()
        copies = sum(1 for m in machines for _ in (m.vault / "Engram").rglob("*(conflict *"))
        print(
            f"steps: {args.steps} in {edits_took:.1f} s, seed {args.seed}: "
            + ", ".join(f"{k} {v}" for k, v in sorted(sc.done.items()))
        )
        print(
            "sync reports (sum over explicit syncs): "
            + ", ".join(f"{k} {v}" for k, v in sorted(sc.reports.items()))
        )
        print(
            f"facts created: {len(sc.created)} by agents here; in Convex: {len(remote)} "
            f"({sum(1 for f in remote.values() if f.get('deletedAt') is not None)} tombstones)"
        )
        print(f"conflict copies kept: {copies}")
        agree = [f"{m.name}: {c['same']} agree" for m, c in zip(machines, checks, strict=True)]
        print(f"converged in {took:.1f} s; checks: " + "; ".join(agree))
        for p in problems:
            print(f"FAIL: {p}")
        print("PASS" if not problems else f"FAIL ({len(problems)} problems)")
        return 0 if not problems else 1
    finally:
        for m in machines:
            if m.server is not None:
                m.server.stop()
        double.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
