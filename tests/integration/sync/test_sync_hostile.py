"""Sync against a buggy or hostile Convex (a real HTTP server on loopback): every run ends,
bad records are kept aside while later facts arrive, remote ids never pick file names, and a
malformed or oversized reply is one line, not a traceback or a memory spike."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engram import config
from engram.codec import encode
from engram.service import Engram
from engram.sync.client import Backoff
from engram.sync.pager import PullLimits
from tests.integration.server.server_helpers import NO_KEYRING
from tests.integration.sync.conftest import SYNC_TOKEN
from tests.integration.sync.hostile import fact, hostile, page, stream

Make = Callable[[str], Engram]


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Make]:
    """`machine(url)`: a vault synced with the deployment at `url` (not asked at set-up)."""
    made: list[Engram] = []

    def make(url: str) -> Engram:
        home = tmp_path / f"m{len(made)}"
        env = {
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "ENGRAM_EMBED_MODEL": "none",
        }
        eng = Engram(config.resolve(env))
        eng.sync_timeout = 2.0
        eng.sync_backoff = Backoff(attempts=2, base=0.05, cap=0.1)
        (home / "vault").mkdir(parents=True)
        eng.init_vault(str(home / "vault"), name="vault")
        eng.sync_init(url, SYNC_TOKEN, device="here", check=False)
        made.append(eng)
        return eng

    yield make
    for eng in made:
        eng.close()


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail the block if it runs longer than `seconds` (the old pull loop never ended)."""

    def late(*_: Any) -> None:
        raise AssertionError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def notes(eng: Engram) -> list[str]:
    """Every file in the vault (dot-files included), vault-relative."""
    root = eng.memory.vault("vault").root
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".obsidian" not in p.parts
    )


def status(eng: Engram) -> dict[str, Any]:
    return encode(eng.sync_status("vault"))


def test_a_cursor_that_never_moves_ends_the_run(machine: Make) -> None:
    with hostile(lambda args, n: page([], "1700:x", False)) as server:
        eng = machine(server.url)
        with within(20):
            report = eng.sync_now("vault", push=False)
        assert report.error is not None and "cursor did not move" in report.error
        assert len(server.calls) == 2  # the second page gave back the first page's cursor
    info = status(eng)
    assert info["state"] == "error" and "cursor did not move" in info["lastError"]


def test_is_done_must_be_true_or_false(machine: Make) -> None:
    with hostile(lambda args, n: page([], f"{n}:x", None)) as server:  # type: ignore[arg-type]
        eng = machine(server.url)
        with within(20):
            report = eng.sync_now("vault", push=False)
        assert report.error == (
            "facts:listChangedSince returned `isDone` as null, not true or false"
        )
        assert len(server.calls) == 1
    assert status(eng)["lastError"] == report.error


def test_a_new_fact_on_every_page_stops_at_the_page_cap_and_resumes(machine: Make) -> None:
    def endless(args: dict[str, Any], n: int) -> dict[str, Any]:
        change = fact(f"{n:032x}", n, f"Fact number {n}.")
        return page([change], f"{change['changeSeq']}:{change['externalId']}", False)

    with hostile(endless) as server:
        eng = machine(server.url)
        eng._sync.sync_limits = PullLimits(pages=5, seconds=30)
        with within(30):
            report = eng.sync_now("vault", push=False)
        assert report.error is None and report.created == 5
        assert report.stopped == "read 5 pages, the most one run reads"
        assert "pull stopped early" in report.summary()
        info = status(eng)
        assert info["state"] == "idle" and info["stopped"] == report.stopped
        last = server.calls[-1]
        with within(30):
            again = eng.sync_now("vault", push=False)
        # the next run starts where the last applied page ended
        assert server.calls[5]["cursor"] == f"{endless(last, 5)['nextCursor']}"
        assert again.created == 5
    assert len([n for n in notes(eng) if n.startswith("Engram/observations/")]) == 10


def test_the_time_budget_ends_a_slow_endless_pull(machine: Make) -> None:
    def slow(args: dict[str, Any], n: int) -> Any:
        time.sleep(0.3)  # in the server's thread: the client just waits
        return page([], f"{n}:x", False)

    with hostile(slow) as server:
        eng = machine(server.url)
        eng._sync.sync_limits = PullLimits(pages=1000, seconds=1.0)
        started = time.monotonic()
        with within(20):
            report = eng.sync_now("vault", push=False)
        took = time.monotonic() - started
    assert report.error is None and report.stopped == "read for 1 s, the most one run reads"
    assert took < 3.0, took
    assert status(eng)["stopped"] == report.stopped


def test_a_nul_in_an_id_is_parked_and_later_facts_still_arrive(machine: Make) -> None:
    good, bad, after = fact("a" * 32, 1), fact("bad\x00id", 2), fact("c" * 32, 3)
    late = fact("d" * 32, 4, "A fact written later.")

    def answer(args: dict[str, Any], n: int) -> dict[str, Any]:
        if args.get("cursor") is None:
            return page([good, bad, after], f"{after['changeSeq']}:{'c' * 32}", True)
        return page([late], f"{late['changeSeq']}:{'d' * 32}", True)

    with hostile(answer) as server:
        eng = machine(server.url)
        first = eng.sync_now("vault", push=False)
        assert first.error is None and first.created == 2 and first.rejected == 1
        second = eng.sync_now("vault", push=False)
        assert second.error is None and second.created == 1
    info = status(eng)
    assert info["state"] == "idle" and info["lastError"] is None
    (kept,) = info["rejected"]
    assert kept["externalId"] == "bad\\x00id"
    assert kept["reason"] == "externalId contains the control or invisible character '\\x00'"
    assert len([n for n in notes(eng) if n.startswith("Engram/observations/")]) == 3


@pytest.mark.parametrize(
    "fid",
    [
        "../../../../../tmp/escape-id",
        "/../../a",
        ".hidden-fact",
        "a\\..\\..\\b",
        "C:evil",
        "x" * 201,
        "right-to-left\u202eoverride",
        "",
        42,
    ],
)
def test_ids_that_cannot_be_a_file_name_are_parked(machine: Make, fid: Any) -> None:
    change = {**fact("0" * 32, 1), "externalId": fid}
    ok = fact("f" * 32, 2, "The fact after it.")
    with hostile(lambda args, n: page([change, ok], "1:x", True)) as server:
        eng = machine(server.url)
        report = eng.sync_now("vault", push=False)
    assert report.error is None and report.rejected == 1 and report.created == 1
    files = notes(eng)
    facts = [n for n in files if n.startswith("Engram/observations/")]
    assert len(facts) == 1 and facts[0].endswith(f"-{'f' * 8}.md"), files
    inside = [n for n in files if not n.startswith((".engram/", "Templates/"))]
    assert all(not part.startswith(".") for n in inside for part in n.split("/")), files
    assert status(eng)["rejected"][0]["reason"].startswith("externalId ")


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("a string", 'returned the string "a string", not a page of changes'),
        (None, "returned null, not a page of changes"),
        (page("abc", "1:x", True), 'returned `changes` as the string "abc", not a list'),  # type: ignore[arg-type]
        (page([1, 2, 3], "1:x", True), "returned a change that is the number 1, not an object"),
        (page([], 7, True), "returned `nextCursor` as the number 7, not a cursor"),  # type: ignore[arg-type]
        ({"changes": [], "nextCursor": "1:x"}, "returned `isDone` as null, not true or false"),
        (page([], "1:x", "yes"), 'returned `isDone` as the string "yes", not true or false'),  # type: ignore[arg-type]
    ],
)
def test_a_malformed_page_is_one_line(machine: Make, value: Any, error: str) -> None:
    with hostile(lambda args, n: value) as server:
        eng = machine(server.url)
        with within(20):
            report = eng.sync_now("vault", push=False)
    assert report.error == f"facts:listChangedSince {error}"
    assert status(eng)["lastError"] == report.error


def test_a_change_of_the_wrong_shape_is_parked(machine: Make) -> None:
    wrong = [
        {**fact("1" * 32, 1), "version": "two"},
        {**fact("2" * 32, 2), "tags": "not-a-list"},
        {**fact("3" * 32, 3), "title": {"nested": True}},
        {**fact("4" * 32, 4), "changeSeq": None},
        {**fact("5" * 32, 5), "deletedAt": "yesterday"},
        {**fact("6" * 32, 6), "scope": "a\x07bell"},
    ]
    with hostile(lambda args, n: page(wrong, "6:x", True)) as server:
        eng = machine(server.url)
        report = eng.sync_now("vault", push=False)
    assert report.error is None and report.rejected == 6 and report.created == 0
    reasons = sorted(r["reason"] for r in status(eng)["rejected"])
    assert reasons == [
        "changeSeq is null, not an Int64 as decimal digits",
        'deletedAt is the string "yesterday", not a number',
        "scope contains a control character",
        'tags is the string "not-a-list", not a list of strings',
        "title is an object, not a string",
        'version is the string "two", not a number',
    ]


@pytest.mark.parametrize(
    ("current", "why"),
    [
        ("garbage", 'a conflict whose current fact is the string "garbage"'),
        ({**fact("9" * 32, 1)}, "a conflict about another fact"),
    ],
)
def test_a_conflict_reply_that_is_not_a_fact_parks_the_write(
    machine: Make, current: Any, why: str
) -> None:
    def conflict(args: dict[str, Any], n: int) -> dict[str, Any]:
        return {"status": "conflict", "externalId": args["fact"]["externalId"], "current": current}

    with hostile(lambda args, n: page([], "", True), conflict) as server:
        eng = machine(server.url)
        mine = eng.fact_add("A fact of ours that Convex answers oddly.")
        report = eng.sync_now("vault")
    assert report.error is None and report.parked == 1 and report.created == 0
    (parked,) = status(eng)["parked"]
    assert parked["factId"] == mine.id and parked["error"] == f"facts:upsert: {why}"
    assert notes(eng).count(mine.path) == 1


def test_an_announced_oversized_reply_is_not_read(machine: Make) -> None:
    with hostile(lambda args, n: stream(400 << 20, content_length=True)) as server:
        eng = machine(server.url)
        with within(20):
            report = eng.sync_now("vault", push=False)
    assert (
        report.error == "Convex's reply to facts:listChangedSince is larger than 32 MiB: not read"
    )


def cli_env(tmp: Path, url: str, *init: str) -> dict[str, str]:
    """A vault set up for `engram` subprocesses, synced with `url` (not asked at set-up;
    `init`: more `sync init` options)."""
    home = tmp / "cli"
    (home / "vault").mkdir(parents=True)
    env = {
        **os.environ,
        **NO_KEYRING,
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "ENGRAM_EMBED_MODEL": "none",
        "NO_COLOR": "1",
    }
    run = [sys.executable, "-m", "engram"]
    subprocess.run([*run, "init", str(home / "vault"), "--name", "vault"], env=env, check=True)
    subprocess.run(
        [*run, "sync", "init", "--no-check", "--url", url, *init],
        env={**env, "ENGRAM_SYNC_TOKEN": SYNC_TOKEN},
        check=True,
        capture_output=True,
    )
    return env


def run_measured(env: dict[str, str], out: Path, *args: str) -> tuple[int, str, int]:
    """Run `engram ARGS`: exit code, stdout and stderr together, and its peak RSS in KiB.

    The peak is the child's own (VmHWM, sampled until it exits): the rusage wait4 reports
    starts from the parent's high-water mark when the child is forked from a large process,
    such as pytest late in a full run."""
    peak = 0
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engram", *args], env=env, stdout=sink, stderr=sink
        )
        status = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            try:
                lines = status.read_text().splitlines()
            except OSError:
                break
            for line in lines:
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
            time.sleep(0.01)
        proc.wait()
    return proc.returncode, out.read_text(), peak


def test_engram_sync_says_a_malformed_reply_in_one_line(tmp_path: Path) -> None:
    with hostile(lambda args, n: "a string") as server:
        env = cli_env(tmp_path, server.url)
        code, output, _ = run_measured(env, tmp_path / "out", "sync", "--no-daemon")
    assert code == 1, output
    assert output.splitlines() == [
        "pushed 0, pulled 0 (created 0, updated 0, archived 0); stopped: facts:listChangedSince"
        ' returned the string "a string", not a page of changes'
    ]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM in /proc")
def test_engram_sync_refuses_a_400_mb_reply_in_bounded_memory(tmp_path: Path) -> None:
    with hostile(lambda args, n: stream(400 << 20)) as server:
        env = cli_env(tmp_path, server.url)
        code, output, peak = run_measured(env, tmp_path / "out", "sync", "--no-daemon")
    assert code == 1, output
    assert output.splitlines() == [
        "pushed 0, pulled 0 (created 0, updated 0, archived 0); stopped: Convex's reply to"
        " facts:listChangedSince is larger than 32 MiB: not read"
    ]
    assert peak < 250_000, f"peak RSS {peak} KiB"  # the whole reply read: 1.28 GB
