"""Parity, generated from the operation list: every operation the daemon-backed Engram sends
to `engram serve` gives what the local Engram gives on the same vault (a real daemon on
127.0.0.1, the real HTTP client). A new routed operation without a case here fails the test.

Reads run both ways on one vault. Writes run on two equal vaults, each served by its own
daemon and index: the daemon-backed write on one, the local write on the other, results equal.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from server_helpers import NO_KEYRING, Daemon
from test_daemon import write_facts

from engram import config
from engram.cli.root import local_engram, open_engram
from engram.codec import encode
from engram.errors import EngramError
from engram.service.operations import OPERATIONS

FACT_A = "a" * 32
Call = Callable[[Any], Any]

READS: dict[str, Call] = {
    "search": lambda e: e.search("pricing", n=5),
    "vsearch": lambda e: e.vsearch("pricing tiers", n=3, chunks=True),
    "query_run": lambda e: e.query_run("pricing decision", n=3, explain=True),
    "get": lambda e: e.get("vault/Projects/Pricing.md", from_line=2, max_lines=5),
    "note_panel": lambda e: e.note_panel("vault", "Projects/Pricing.md"),
    "fact_get": lambda e: e.fact_get(FACT_A),
    "recent_facts": lambda e: e.recent_facts(5),
    "recall": lambda e: e.recall("payments", n=5),
    "memory_context": lambda e: e.memory_context("payments", budget=500),
    "deep_search": lambda e: e.deep_search("payments", n=3),
    "neighbors": lambda e: e.neighbors("Welcome", depth=2),
    "tags": lambda e: e.tags(sort="count"),
}
WRITES: dict[str, Call] = {
    "fact_add": lambda e: e.fact_add(
        "Oat milk is delivered on Fridays.", fact_type="decision", tags=["supplies"]
    ),
    "fact_update": lambda e: e.fact_update(FACT_A, importance=0.4, tags=["payments", "kept"]),
    "fact_archive": lambda e: e.fact_archive(FACT_A),
    "fact_from_note": lambda e: e.fact_from_note("Café Notes.md", selection="espresso"),
    "note_create": lambda e: e.note_create("Inbox/Fresh.md", body="fresh [[Welcome]]"),
    "note_edit": lambda e: e.note_edit("Inbox/Fresh.md", append="more", dry_run=True),
    "note_link": lambda e: e.note_link("Inbox/Fresh.md", "Projects/Pricing.md"),
    "note_move": lambda e: e.note_move("Inbox/Fresh.md", "Archive/Fresh.md"),
    "note_delete": lambda e: e.note_delete("Archive/Fresh"),
    "sync_now": lambda e: e.sync_now(),
    "ledger_append": lambda e: e.ledger_append(
        "bot", [(1, {"role": "user", "text": "The oat milk order moved to Fridays."})]
    ),
    "ledger_observe": lambda e: e.ledger_observe("bot"),
    "reflect": lambda e: e.reflect("this week"),
}
ROUTES = {op.name: op.route.split("{")[0] for op in OPERATIONS if op.route is not None}
SENT = {op.name for op in OPERATIONS if op.route is not None}


def outcome(call: Call, engram: Any, write: bool = False) -> Any:
    """What a call gives as a face prints it (the wire's JSON), or the error it raises."""
    try:
        return comparable(encode(call(engram)), write)
    except EngramError as exc:
        return (type(exc).__name__, str(exc))


# By nature different between two runs: each recall counts an access, a query's stages are
# timed; on two vaults, a new fact's id (and the file name made from it) and when it was made.
NATURE = {"accessCount", "lastAccess", "ms"}
TWO_RUNS = {"id", "timestamp", "updatedAt", "path", "file", "collection"}


def comparable(data: Any, write: bool) -> Any:
    """JSON with the keys that differ by nature left out."""
    if isinstance(data, list):
        return [comparable(v, write) for v in data]
    if isinstance(data, dict):
        drop = NATURE | (TWO_RUNS if write else set())
        return {k: comparable(v, write) for k, v in data.items() if k not in drop}
    return data


def asked_once(d: Daemon, route: str, before: int, name: str) -> None:
    """The daemon logged one more request of `route` (its access log is written just after
    it answers, so wait a little for the line)."""
    deadline = time.monotonic() + 10
    while d.log.read_text().count(route) == before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert d.log.read_text().count(route) == before + 1, name


def env_for(base: dict[str, str], tmp: Path, name: str, tiny: Any) -> dict[str, str]:
    paths = os.environ.get("PYTHONPATH", "")
    absolute = os.pathsep.join(os.path.abspath(p) for p in paths.split(os.pathsep) if p)
    return {
        **base,
        **NO_KEYRING,
        "PYTHONPATH": absolute,
        "ENGRAM_INDEX": name,
        "ENGRAM_EMBED_MODEL": str(tiny.embed),
    }


def serve(env: dict[str, str], vault: Path, log: Path, daemons: list[Daemon]) -> Daemon:
    d = Daemon(env, vault, log, "--no-watch")
    daemons.append(d)
    d.wait_ready()
    d.wait_indexed()
    return d


@pytest.fixture
def tiny_env(xdg: dict[str, str], tiny: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    def make(name: str) -> dict[str, str]:
        env = env_for(xdg, Path(xdg["XDG_DATA_HOME"]), name, tiny)
        for key in ("ENGRAM_INDEX", "ENGRAM_EMBED_MODEL", *NO_KEYRING):
            monkeypatch.setenv(key, env[key])
        return env

    return make


def engrams(env: dict[str, str]) -> tuple[Any, Any]:
    """The daemon-backed and the local Engram of an index, as the composition root makes them."""
    settings = config.resolve(env)
    return open_engram(settings, use_daemon=True), local_engram(settings)


def test_every_operation_sent_to_the_daemon_has_a_parity_case() -> None:
    assert set(READS) | set(WRITES) == SENT
    effects = {op.name: op.effect for op in OPERATIONS}
    assert all(effects[n] == "read" for n in READS) and all(effects[n] == "write" for n in WRITES)


def test_reads_through_the_daemon_equal_reads_in_process(
    daemons: list[Daemon], tiny_vault: Path, tmp_path: Path, tiny_env: Any
) -> None:
    write_facts(tiny_vault)
    env = tiny_env("index")
    d = serve(env, tiny_vault, tmp_path / "serve.log", daemons)
    remote, local = engrams({**os.environ, **env})
    try:
        assert remote.daemon() is not None and remote.daemon().pid == d.proc.pid
        for name, call in READS.items():
            asked = d.log.read_text().count(ROUTES[name])
            got = outcome(call, remote)
            asked_once(d, ROUTES[name], asked, name)  # it really asked the daemon
            assert got == outcome(call, local), name
            assert not isinstance(got, tuple), got  # each case answers (errors are for writes)
    finally:
        remote.close()
        local.close()


def test_writes_through_the_daemon_equal_writes_in_process(
    daemons: list[Daemon], tiny_vault: Path, tmp_path: Path, tiny_env: Any
) -> None:
    write_facts(tiny_vault)
    twin = tmp_path / "twin"
    shutil.copytree(tiny_vault, twin)
    env_a = tiny_env("a")
    d = serve(env_a, tiny_vault, tmp_path / "serve-a.log", daemons)
    remote, _ = engrams({**os.environ, **env_a})
    assert remote.daemon() is not None
    env_b = tiny_env("b")
    serve(env_b, twin, tmp_path / "serve-b.log", daemons).stop()  # registers and indexes it
    _, local = engrams({**os.environ, **env_b})
    try:
        for name, call in WRITES.items():
            asked = d.log.read_text().count(ROUTES[name])
            got = outcome(call, remote, True)
            asked_once(d, ROUTES[name], asked, name)
            assert got == outcome(call, local, True), name
    finally:
        remote.close()
        local.close()
