"""One `engram serve` per vault and per index, however many start at once; the token changes
at every start and stays out of git; a stale discovery file is replaced, and ignored by the
CLI even when its pid is alive."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from server_helpers import NO_KEYRING, Daemon

from engram.server import discovery

STARTS = 4


@pytest.fixture
def env(xdg: dict[str, str]) -> dict[str, str]:
    """The isolated environment, with an absolute PYTHONPATH (git runs elsewhere)."""
    paths = os.environ.get("PYTHONPATH", "")
    absolute = os.pathsep.join(os.path.abspath(p) for p in paths.split(os.pathsep) if p)
    return {**xdg, **NO_KEYRING, "NO_COLOR": "1", "PYTHONPATH": absolute}


def start_together(
    daemons: list[Daemon], tmp_path: Path, runs: list[tuple[dict[str, str], Path]]
) -> Daemon:
    """Start every (env, vault) at once; return the one that stays up, after checking each
    other one exited 1 with one line naming it."""
    started = [
        Daemon(env, vault, tmp_path / f"race-{i}.log", "--no-watch")
        for i, (env, vault) in enumerate(runs)
    ]
    daemons.extend(started)
    deadline = time.monotonic() + 90
    while sum(d.proc.poll() is None for d in started) > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [d for d in started if d.proc.poll() is None]
    assert len(alive) == 1, [d.log.read_text() for d in started]
    winner = alive[0]
    for d in started:
        if d is winner:
            continue
        assert d.proc.wait(timeout=30) == 1
        lines = d.log.read_text().strip().splitlines()
        assert len(lines) == 1, lines
        assert "already running" in lines[0] and f"pid {winner.proc.pid}" in lines[0]
    info = winner.wait_ready()
    assert winner.call("GET", "/v1/status")[0] == 200 and info["pid"] == winner.proc.pid
    return winner


def copy_vault(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def test_simultaneous_starts_on_one_vault_leave_one_daemon(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    start_together(daemons, tmp_path, [(env, tiny_vault)] * STARTS)


def test_simultaneous_starts_on_one_vault_with_other_indexes_leave_one_daemon(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    runs = [({**env, "ENGRAM_INDEX": f"index{i}"}, tiny_vault) for i in range(STARTS)]
    start_together(daemons, tmp_path, runs)


def test_simultaneous_starts_on_one_index_with_other_vaults_leave_one_daemon(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    vaults = [copy_vault(tiny_vault, tmp_path / f"vault{i}") for i in range(STARTS)]
    start_together(daemons, tmp_path, [(env, v) for v in vaults])


def engram(env: dict[str, str], *args: str, timeout: float = 60) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_killed_daemons_files_are_ignored_even_when_its_pid_lives_on(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    d = Daemon(env, tiny_vault, tmp_path / "serve.log", "--no-watch")
    daemons.append(d)
    d.wait_ready()
    d.wait_indexed()
    d.stop(9)  # SIGKILL: both discovery files stay behind
    server_file = Path(env["XDG_DATA_HOME"]) / "engram" / "index.server.json"
    assert d.discovery.exists() and server_file.exists()
    # The pid is reused by a live process, and something on the port takes the request and
    # never answers: a client that trusted the file would wait for minutes.
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(8)
    for path in (d.discovery, server_file):
        stale = json.loads(path.read_text())
        stale.update(pid=os.getpid(), port=mute.getsockname()[1], url="http://127.0.0.1:1")
        path.write_text(json.dumps(stale))
    try:
        start = time.monotonic()
        found = engram(env, "search", "pricing", "--json", timeout=30)
        assert found.returncode == 0, found.stderr
        assert time.monotonic() - start < 20
        again = Daemon(env, tiny_vault, tmp_path / "serve-2.log", "--no-watch")
        daemons.append(again)
        info = again.wait_ready()
        assert info["pid"] == again.proc.pid
        assert json.loads(server_file.read_text())["pid"] == again.proc.pid
    finally:
        mute.close()


def test_the_token_changes_at_every_start(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    tokens = []
    for i in range(2):
        d = Daemon(env, tiny_vault, tmp_path / f"serve-{i}.log", "--no-watch")
        daemons.append(d)
        tokens.append(d.wait_ready()["token"])
        assert d.call("GET", "/v1/status")[0] == 200
        assert d.call("GET", "/v1/status", token=tokens[0])[0] == (200 if i == 0 else 401)
        assert d.stop() == 0
    assert tokens[0] != tokens[1]


def git(vault: Path, *args: str) -> str:
    run = subprocess.run(
        ["git", "-C", str(vault), *args], capture_output=True, text=True, check=True
    )
    return run.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_add_all_in_a_served_vault_does_not_stage_the_discovery_file(
    daemons: list[Daemon], env: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    git(tiny_vault, "init", "-q")
    plugin = tiny_vault / ".obsidian" / "plugins" / "engram"
    plugin.mkdir(parents=True, exist_ok=True)
    (plugin / ".gitignore").write_text("data.json")  # the user's own, with no final newline
    d = Daemon(env, tiny_vault, tmp_path / "serve.log", "--no-watch")
    daemons.append(d)
    token = d.wait_ready()["token"]
    git(tiny_vault, "add", "-A")
    staged = git(tiny_vault, "diff", "--cached", "--name-only").splitlines()
    assert ".obsidian/plugins/engram/.gitignore" in staged
    assert not any(name.endswith("discovery.json") for name in staged)
    assert token not in git(tiny_vault, "diff", "--cached")
    assert (plugin / ".gitignore").read_text() == "data.json\ndiscovery.json\n"
    assert d.stop() == 0
    again = Daemon(env, tiny_vault, tmp_path / "serve-2.log", "--no-watch")
    daemons.append(again)
    again.wait_ready()
    assert (plugin / ".gitignore").read_text() == "data.json\ndiscovery.json\n"  # not twice


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, "discovery.json\n"),
        ("", "discovery.json\n"),
        ("data.json", "data.json\ndiscovery.json\n"),
        ("data.json\n", "data.json\ndiscovery.json\n"),
        ("/discovery.json\n", "/discovery.json\n"),
        ("!discovery.json\n", "!discovery.json\n"),  # the user wants it tracked: their call
        ("# mine\n\ndiscovery.json\n*.log\n", "# mine\n\ndiscovery.json\n*.log\n"),
    ],
)
def test_ignore_in_git_adds_one_line_and_keeps_the_rest(
    tmp_path: Path, before: str | None, after: str
) -> None:
    path = tmp_path / ".gitignore"
    if before is not None:
        path.write_text(before)
        path.chmod(0o640)
    assert discovery.ignore_in_git(tmp_path) == (before != after)
    assert path.read_text() == after
    assert path.stat().st_mode & 0o777 == (0o640 if before is not None else 0o644)
    assert [p.name for p in tmp_path.iterdir()] == [".gitignore"]  # no temporary file left


def test_ignore_in_git_leaves_a_symlinked_gitignore_alone(tmp_path: Path) -> None:
    target = tmp_path / "shared-ignore"
    target.write_text("*.log\n")
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / ".gitignore").symlink_to(target)
    assert not discovery.ignore_in_git(tmp_path / "plugin")
    assert target.read_text() == "*.log\n"
