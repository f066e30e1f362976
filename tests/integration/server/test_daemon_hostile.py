"""A real daemon fed hostile notes: an alias bomb through POST /v1/notes leaves its writer
working, a note that parses slowly does not delay SIGTERM, and nothing it writes outside the
vault is readable by others."""

from __future__ import annotations

import signal
import stat
import time
from pathlib import Path

from server_helpers import NO_KEYRING, Daemon

from tests.unit.test_hostile_parse import alias_bomb


def env_of(xdg: dict[str, str]) -> dict[str, str]:
    return {**xdg, **NO_KEYRING, "NO_COLOR": "1"}


def wait_idle(d: Daemon, timeout: float = 60) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, body = d.call("GET", "/v1/status")
        if status == 200 and body["indexing"]["state"] == "idle":
            return body
        time.sleep(0.1)
    raise AssertionError("the daemon's index job never finished")


def test_an_alias_bomb_posted_as_a_note_leaves_the_writer_working(
    daemons: list[Daemon], xdg: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    d = Daemon(env_of(xdg), tiny_vault, tmp_path / "serve.log", "--no-watch")
    daemons.append(d)
    d.wait_ready()
    wait_idle(d)
    started = time.monotonic()
    status, body = d.call("POST", "/v1/notes", {"path": "bomb.md", "body": alias_bomb()})
    assert status == 201, body
    wait_idle(d)
    status, body = d.call("POST", "/v1/search", {"q": "stays searchable"})
    assert [r["path"] for r in body["results"]] == ["bomb.md"]
    status, body = d.call("POST", "/v1/notes", {"path": "after.md", "body": "later write"})
    assert status == 201, body
    wait_idle(d)
    assert time.monotonic() - started < 60  # it hung forever before
    status, body = d.call("POST", "/v1/search", {"q": "later write"})
    assert [r["path"] for r in body["results"]] == ["after.md"]
    stopped = time.monotonic()
    assert d.stop(signal.SIGTERM) == 0
    assert time.monotonic() - stopped < 10
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):  # index, lock, token file, discovery
        for path in (Path(xdg[var]) / "engram").rglob("*"):
            assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


def test_sigterm_does_not_wait_for_a_slow_parse(
    daemons: list[Daemon], xdg: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    row = "|" + "a|" * 4000 + "\n"
    (tiny_vault / "slow.md").write_text(row + "|" + "-|" * 4000 + "\n" + row * 400)  # ~3 MB
    d = Daemon(env_of(xdg), tiny_vault, tmp_path / "serve.log", "--no-watch")
    daemons.append(d)
    d.wait_ready()
    deadline = time.monotonic() + 30
    while True:  # the start-up job is parsing slow.md (its deadline: over 20 s)
        _, body = d.call("GET", "/v1/status")
        if body["indexing"]["state"] == "indexing":
            break
        assert time.monotonic() < deadline, body
        time.sleep(0.05)
    while len(helpers := descendants(d.proc.pid)) < 2:  # the forkserver and the parsing worker
        assert time.monotonic() < deadline, helpers
        time.sleep(0.05)
    stopped = time.monotonic()
    assert d.stop(signal.SIGTERM) == 0
    assert time.monotonic() - stopped < 8, d.log.read_text()
    deadline = time.monotonic() + 10
    while (left := [p for p in helpers if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []


def ppids() -> dict[int, int]:
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                out[int(entry.name)] = int(fields[1])
            except OSError:
                continue
    return out


def descendants(pid: int) -> list[int]:
    parents = ppids()
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        found += kids
        todo += kids
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
