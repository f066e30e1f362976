"""Sync tests against the loopback Convex double (our real convex/ functions in convex-test,
behind Convex's HTTP wire format, with injected faults): see docs/convex.md."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engram import config
from engram.codec import encode
from engram.service import Engram
from engram.sync.client import Backoff

ROOT = Path(__file__).resolve().parents[3]
SYNC_TOKEN = "test-sync-token"


@dataclass
class Double:
    """A running double: its URL and its control API."""

    url: str
    proc: subprocess.Popen[str]

    def control(self, method: str, path: str, body: Any = None) -> Any:
        """Call /_double/<path>."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.url}/_double/{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read() or b"null")

    def fault(self, **spec: Any) -> None:
        """Queue a fault for the next matching request."""
        self.control("POST", "fault", spec)

    def run(self, path: str, args: dict[str, Any], route: str = "mutation") -> Any:
        """Run a function as another client (another machine writing to Convex)."""
        reply = self.control("POST", "run", {"path": path, "args": args, "route": route})
        assert reply["status"] == "success", reply
        return reply["value"]

    def facts(self) -> dict[str, dict[str, Any]]:
        """The facts table as stored, by externalId."""
        return {f["externalId"]: f for f in self.control("GET", "dump")["facts"]}

    def log(self) -> list[dict[str, Any]]:
        """Requests the double saw."""
        return list(self.control("GET", "log")["requests"])


@pytest.fixture(scope="session")
def convex_double() -> Iterator[Double]:
    """One double for the session (each test gets it reset)."""
    if shutil.which("node") is None or not (ROOT / "node_modules" / "convex-test").is_dir():
        pytest.skip("needs Node.js and `npm ci` at the repo root (scripts/install.sh does both)")
    proc = subprocess.Popen(
        [
            "node",
            "tests/convex_double/server.mjs",
            "--port",
            "0",
            "--sync-token",
            SYNC_TOKEN,
            "--exit-with-parent",
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("LISTENING"), line
    double = Double(f"http://127.0.0.1:{int(line.split()[1])}", proc)
    yield double
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def double(convex_double: Double) -> Double:
    """The session's double, reset: empty deployment, no faults, empty log (waiting for it
    to listen again if the last test took it down)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            convex_double.control("POST", "reset", {})
            return convex_double
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


Machine = Callable[[str], Engram]


@pytest.fixture
def machine(tmp_path: Path, double: Double) -> Iterator[Machine]:
    """`machine(name)`: a vault with its own index and config (as on its own computer),
    synced with the double; fast retries so fault tests stay quick."""
    made: list[Engram] = []

    def make(name: str) -> Engram:
        home = tmp_path / name
        env = {
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "ENGRAM_EMBED_MODEL": "none",
        }
        eng = Engram(config.resolve(env))
        eng.sync_timeout = 2.0
        eng.sync_backoff = Backoff(attempts=4, base=0.05, cap=0.5)
        vault = home / "vault"
        vault.mkdir(parents=True)
        eng.init_vault(str(vault), name="vault")
        eng.sync_init(double.url, SYNC_TOKEN, device=name)
        made.append(eng)
        return eng

    yield make
    for eng in made:
        eng.close()


def local_payloads(eng: Engram) -> dict[str, dict[str, Any]]:
    """Every fact note of the machine's vault, as the payload sync would send."""
    from engram.memory import format as fmt
    from engram.memory.model import LIFECYCLE_STATES
    from engram.store import facts as facts_store
    from engram.sync.payload import payload_of

    q = facts_store.FactQuery(collection="vault", states=LIFECYCLE_STATES)
    root = eng.memory.vault("vault").root
    out = {}
    for row in facts_store.query(eng.db.conn, q):
        fact = fmt.parse((root / row["path"]).read_text(encoding="utf-8"), row["path"])
        assert fact is not None and fact.id == row["id"]
        out[fact.id] = payload_of(fact, str(row["last_edited_by"]))
    return out


def remote_payloads(double: Double) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """Live facts in the double as payloads, and the ids of tombstones."""
    from engram.sync.payload import normalized, remote_fields

    live, dead = {}, set()
    for fid, doc in double.facts().items():
        if doc.get("deletedAt") is not None:
            dead.add(fid)
        else:
            live[fid] = normalized(remote_fields(doc))
    return live, dead


def assert_converged(double: Double, *machines: Engram) -> dict[str, dict[str, Any]]:
    """Every machine holds exactly Convex's live facts, content for content; a tombstone
    is an archived note (or no note). Returns the live facts."""
    from engram.sync.payload import content_hash

    live, dead = remote_payloads(double)
    for eng in machines:
        mine = local_payloads(eng)
        for fid in dead:
            if fid in mine:
                assert mine[fid]["lifecycleState"] in ("archived", "pruned"), fid
                del mine[fid]
        assert set(mine) == set(live), set(mine) ^ set(live)
        for fid, payload in live.items():
            if content_hash(mine[fid]) != content_hash(payload):
                keys = payload.keys() | mine[fid].keys()
                diff = {k: (mine[fid].get(k), payload.get(k)) for k in keys}
                raise AssertionError(f"{fid} differs: {diff}")
        assert encode(eng.sync_status("vault"))["pending"] == 0
        check = encode(eng.sync_check("vault"))  # the product's own check agrees
        assert check["inStep"] and check["same"] == len(live), check
    return live
