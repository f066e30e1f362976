"""A real `engram serve` on loopback: discovery files, shutdown, one daemon per vault and index,
the watcher, and the CLI using the daemon."""

from __future__ import annotations

import http.client
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from server_helpers import NO_KEYRING, Daemon


@pytest.fixture
def env(xdg: dict[str, str]) -> dict[str, str]:
    """The isolated environment, with an absolute PYTHONPATH (some commands run elsewhere)."""
    paths = os.environ.get("PYTHONPATH", "")
    absolute = os.pathsep.join(os.path.abspath(p) for p in paths.split(os.pathsep) if p)
    return {**xdg, **NO_KEYRING, "NO_COLOR": "1", "PYTHONPATH": absolute}


def engram(env: dict[str, str], *args: str, cwd: Path | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def start(
    daemons: list[Daemon], env: dict[str, str], vault: Path, tmp_path: Path, *args: str
) -> Daemon:
    d = Daemon(env, vault, tmp_path / f"serve-{len(daemons)}.log", *args)
    daemons.append(d)
    return d


def server_file(env: dict[str, str], index: str = "index") -> Path:
    return Path(env["XDG_DATA_HOME"]) / "engram" / f"{index}.server.json"


def requests_logged(d: Daemon, line: str) -> int:
    return d.log.read_text().count(line)


def wait_for(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_discovery_written_private_and_removed_at_shutdown(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path, sig: int
) -> None:
    d = start(daemons, env, tiny_vault, tmp_path, "--no-watch")
    info = d.wait_ready()
    assert stat.S_IMODE(d.discovery.stat().st_mode) == 0o600
    assert stat.S_IMODE(server_file(env).stat().st_mode) == 0o600
    assert info["url"] == f"http://127.0.0.1:{info['port']}"
    assert info["vault"] == str(tiny_vault.resolve())
    assert info["token"] and "search" in info["capabilities"]
    assert d.call("GET", "/v1/status")[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", info["port"], timeout=10)
    conn.request("GET", "/v1/health", headers={"Host": "attacker.example"})
    assert conn.getresponse().status == 403
    conn.close()
    assert d.stop(sig) == 0
    assert not d.discovery.exists()
    assert not server_file(env).exists()
    log = d.log.read_text()
    assert info["token"] not in log and "Traceback" not in log


def test_stale_discovery_replaced_and_second_server_refused(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tiny_vault / ".obsidian" / "plugins" / "engram" / "discovery.json"
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps({"name": "engram", "pid": dead.pid, "port": 9, "token": "old"}))
    first = start(daemons, env, tiny_vault, tmp_path, "--no-watch")
    info = first.wait_ready()
    assert info["pid"] == first.proc.pid and info["token"] != "old"

    same_index = start(daemons, env, tiny_vault, tmp_path, "--no-watch")
    assert same_index.proc.wait(timeout=60) == 1
    message = same_index.log.read_text()
    assert "already running" in message and f"pid {first.proc.pid}" in message

    proc = engram(env, "--index", "other", "serve", "--vault", str(tiny_vault), "--no-watch")
    assert proc.returncode == 1
    assert "already running" in proc.stderr and f"pid {first.proc.pid}" in proc.stderr
    assert json.loads(stale.read_text())["pid"] == first.proc.pid  # untouched by the refusals


def test_watcher_indexes_a_new_note(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    debounce = 1.0
    d = start(daemons, env, tiny_vault, tmp_path, "--debounce", str(debounce))
    d.wait_ready()
    wait_for(
        lambda: d.call("GET", "/v1/status")[1]["indexing"]["state"] == "idle", 30, "first index"
    )
    (tiny_vault / "Inbox").mkdir()
    (tiny_vault / "Inbox" / "Fresh idea.md").write_text("# Fresh\n\nquokkas are underrated\n")
    (tiny_vault / ".obsidian" / "ignored.md").write_text("quokkas in the config folder\n")
    written = time.monotonic()

    def found() -> list[str]:
        results = d.call("POST", "/v1/search", {"q": "quokkas"})[1]["results"]
        return [r["path"] for r in results]

    assert wait_for(found, debounce + 10, "the watcher") == ["Inbox/Fresh idea.md"]
    assert time.monotonic() - written >= debounce * 0.9  # the quiet period was respected
    (tiny_vault / "Inbox" / "Fresh idea.md").unlink()
    wait_for(lambda: found() == [], debounce + 10, "the deletion")


def test_cli_uses_the_daemon_with_the_same_results(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    d = start(daemons, env, tiny_vault, tmp_path, "--no-watch")
    d.wait_ready()
    wait_for(lambda: d.call("GET", "/v1/status")[1]["documents"] == 6, 30, "the first index")
    name = d.info["collection"]
    cases = [
        ("search", "pricing", "--json"),
        ("search", "pricing", "--all", "--full", "--json"),
        ("search", "café", "-n", "1"),
        ("get", f"{name}/Projects/Pricing.md", "--json"),
        ("get", "Welcome.md:7", "-l", "3"),
        ("get", f"engram://{name}/Café Notes.md", "--md"),
    ]
    for args in cases:
        route = "POST /v1/search" if args[0] == "search" else "GET /v1/documents"
        before = requests_logged(d, route)
        remote = engram(env, *args)
        assert remote.returncode == 0, remote.stderr
        assert requests_logged(d, route) == before + 1, args  # it really asked the daemon
        local = engram(env, *args, "--no-daemon")
        assert requests_logged(d, route) == before + 1  # ...and --no-daemon did not
        assert remote.stdout == local.stdout, args
    relative = engram(env, "get", "Projects/Pricing.md", "--json", cwd=tiny_vault)
    assert json.loads(relative.stdout)[0]["path"] == "Projects/Pricing.md"
    for args in (("get", "Nope.md"), ("search", "x", "-c", "nope")):
        remote, local = engram(env, *args), engram(env, *args, "--no-daemon")
        assert remote.returncode == local.returncode == 1
        assert remote.stderr == local.stderr
    d.stop()
    after = engram(env, "search", "pricing", "--json")  # the daemon is gone: in-process
    assert after.returncode == 0 and json.loads(after.stdout)


FACT = """---
id: {id}
title: {title}
factType: decision
source: cli
createdBy: test
scope: default
timestamp: 2999-01-01T00:00:00Z
updatedAt: 2999-01-01T00:00:00Z
tags:
- payments
importanceScore: {importance}
confidence: 0.9
lifecycleState: active
lastEditedBy: system
---

{text}
"""


def write_facts(vault: Path) -> None:
    """Two decisions dated in the future: their recency is exactly 1, so scores do not move
    between the daemon's call and the in-process one."""
    for fid, title, importance, text in (
        ("a" * 32, "Stripe for payments", 0.9, "We chose Stripe as the payment provider."),
        ("b" * 32, "Invoices monthly", 0.5, "Invoices for payments go out monthly by email."),
    ):
        folder = vault / "Engram" / "decisions"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{title.lower().replace(' ', '-')}-{fid[:8]}.md").write_text(
            FACT.format(id=fid, title=title, importance=importance, text=text)
        )


def without_access_counts(text: str) -> Any:
    """A recall's JSON minus when and how often each fact was recalled (every recall counts)."""
    data = json.loads(text)
    hits = data["results"] if isinstance(data, dict) else data
    for hit in hits:
        for fact in (hit.get("fact"), hit.get("hit", {}).get("fact")):
            if fact:
                fact.pop("accessCount", None)
                fact.pop("lastAccess", None)
    return data


def test_cli_semantic_search_and_recall_use_the_daemon_with_the_same_results(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path, tiny: Any
) -> None:
    write_facts(tiny_vault)
    env = {**env, "ENGRAM_EMBED_MODEL": str(tiny.embed)}
    d = start(daemons, env, tiny_vault, tmp_path, "--no-watch")
    d.wait_ready()

    def embedded() -> bool:
        st = d.call("GET", "/v1/status")[1]
        return bool(st["indexing"]["state"] == "idle" and st["chunks"] == st["embedded"] > 0)

    wait_for(embedded, 60, "the first index and embeddings")
    query, deep = "POST /v1/query", "POST /v1/memory/deep-search"
    cases = [
        ("POST /v1/vsearch", ("vsearch", "pricing tiers", "--json")),
        ("POST /v1/vsearch", ("vsearch", "espresso café", "-n", "2")),
        (query, ("query", "pricing decision", "--json")),
        (query, ("query", "espresso", "--md")),
        ("POST /v1/recall", ("recall", "payment provider")),
        ("POST /v1/recall", ("recall", "payments", "--json")),
        ("POST /v1/recall", ("recall", "payments", "--type", "decision", "--tag", "payments")),
        ("POST /v1/recall", ("recall", "pricing", "--notes", "--json")),
        ("POST /v1/recall", ("recall", "payments", "--scope", "default", "--tier", "structural")),
        ("POST /v1/recall", ("recall", "--all-states")),
        (deep, ("recall", "--deep", "payments")),
        (deep, ("recall", "--deep", "Stripe", "-n", "1", "--json")),
    ]
    for route, args in cases:
        before = requests_logged(d, route)
        remote = engram(env, *args)
        assert remote.returncode == 0, remote.stderr
        assert requests_logged(d, route) == before + 1, args  # it really asked the daemon
        local = engram(env, *args, "--no-daemon")
        assert local.returncode == 0, local.stderr
        assert requests_logged(d, route) == before + 1  # ...and --no-daemon did not
        if args[0] == "recall" and "--json" in args:
            assert without_access_counts(remote.stdout) == without_access_counts(local.stdout)
        else:
            assert remote.stdout == local.stdout, args
        assert remote.stdout.strip(), args
    shown = engram(env, "recall", "--deep", "payments").stdout
    assert "local   " in shown and "Stripe for payments" in shown
    assert "note: local only: sync is not configured" in shown
    recalled = engram(env, "recall", "payment provider").stdout.splitlines()
    assert "aaaaaaaa  [decision|i=0.90]  Stripe for payments" in recalled[0]
    refused = engram(env, "recall", "--deep", "payments", "--type", "decision")
    assert refused.returncode == 2 and "--deep takes no filters" in refused.stderr


def make_vault(root: Path, notes: int) -> Path:
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
    ]
    for i in range(notes):
        folder = root / f"f{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        body = " ".join(words[(i * 7 + j) % len(words)] for j in range(600))
        (folder / f"note {i}.md").write_text(f"# Note {i}\n\n{body}\n\n[[note {i + 1}]]\n")
    return root


def test_cli_search_while_the_daemon_indexes(
    daemons: list[Daemon], env: dict[str, str], tmp_path: Path
) -> None:
    vault = make_vault(tmp_path / "big", 3000)
    d = start(daemons, env, vault, tmp_path, "--no-watch")
    d.wait_ready()
    status = d.call("GET", "/v1/status")[1]
    assert status["indexing"]["state"] == "indexing"
    for extra in ((), ("--no-daemon",)):
        out = engram(env, "search", "gamma", "-n", "3", "--json", *extra)
        assert out.returncode == 0, out.stderr
        assert isinstance(json.loads(out.stdout), list)
    wait_for(lambda: d.call("GET", "/v1/status")[1]["indexing"]["state"] == "idle", 120, "indexing")
    status = d.call("GET", "/v1/status")[1]
    assert status["documents"] == 3000 and status["lastError"] is None


def test_token_rotate_reaches_the_running_daemon(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    d = start(daemons, env, tiny_vault, tmp_path, "--no-watch")
    old = d.wait_ready()["token"]
    shown = engram(env, "token", "show", "--vault", str(tiny_vault))
    assert shown.stdout.strip() == old
    rotated = engram(env, "token", "rotate", "--vault", str(tiny_vault))
    assert rotated.returncode == 0, rotated.stderr
    assert f"pid {d.proc.pid}" in rotated.stderr and old not in rotated.stderr + rotated.stdout
    assert d.call("GET", "/v1/status", token=old)[0] == 401
    new = json.loads(d.discovery.read_text())["token"]
    assert new != old and d.call("GET", "/v1/status", token=new)[0] == 200
    assert json.loads(server_file(env).read_text())["token"] == new
    assert engram(env, "token", "show", "--vault", str(tiny_vault)).stdout.strip() == new
    d.stop()
    engram(env, "token", "rotate", "--vault", str(tiny_vault))  # no daemon: store only
    assert engram(env, "token", "show", "--vault", str(tiny_vault)).stdout.strip() != new
