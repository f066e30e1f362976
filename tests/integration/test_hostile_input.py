"""Hostile vaults end to end (issue 14): an alias bomb, notes that parse slowly, symlinks out
of the vault, a SIGKILLed update, generated garbage; and who may read the index."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import config
from engram.errors import UnavailableError
from engram.index import indexer, loader
from engram.index.indexer import IndexWarning
from engram.index.loader import ParsePool
from engram.service import Engram
from engram.store.db import Database
from tests.conftest import EngramCli
from tests.integration.server.server_helpers import NO_KEYRING
from tests.unit.test_hostile_parse import alias_bomb

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(xdg: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **xdg, **NO_KEYRING, "NO_COLOR": "1", "PYTHONPATH": str(ROOT / "backend")}


def normal_vault(root: Path, n: int) -> Path:
    for i in range(n):
        path = root / f"d{i % 10}" / f"note-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        words = " ".join(f"w{(i * 7 + k) % 997}" for k in range(120))
        path.write_text(
            f"---\ntitle: Note {i}\ntags: [t{i % 5}]\n---\n# Note {i}\n\n{words} uniq{i}x "
            f"[[note-{(i + 1) % n:05d}]]\n"
        )
    return root


def matching(db: Database, word: str) -> list[str]:
    """Paths of the documents whose text has `word` (the full-text index, as search reads it)."""
    rows = db.conn.execute(
        "SELECT d.path FROM documents_fts f JOIN documents d ON d.id = f.rowid"
        " WHERE documents_fts MATCH ?",
        (word,),
    )
    return [r[0] for r in rows]


def register(run: EngramCli, env: dict[str, str], vault: Path) -> None:
    run(env, "collection", "add", str(vault), "--name", "v", "--no-index")


# The updates that may run away (in time, memory or processes) run in a process of their own,
# to be measured, timed out or killed.
@pytest.mark.slow
def test_update_with_an_alias_bomb_finishes_in_worker_processes(
    run: EngramCli, env: dict[str, str], tmp_path: Path
) -> None:
    vault = normal_vault(tmp_path / "vault", loader.PARALLEL_MIN_FILES + 50)  # worker processes
    (vault / "bomb.md").write_text(alias_bomb().replace("the body", "zebraword the body"))
    register(run, env, vault)
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "update"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        out, _ = proc.communicate(timeout=180)  # before the fix: 7.8 GB after 300 s, nothing
    finally:
        proc.kill()
    assert proc.returncode == 0, out
    assert b"bomb.md: frontmatter not read" in out
    assert b"451 added" in out
    found = run(env, "search", "zebraword", "--json")
    assert '"path": "bomb.md"' in found.stdout


# Runs argv[2:] and prints its peak RSS in KB last. A child's ru_maxrss counts the memory of
# the process it was forked from (Linux keeps the old mm's high-water mark across exec), so the
# command is started from this small fresh interpreter, not from the big pytest process.
MEASURE = """
import os, subprocess, sys, time
proc = subprocess.Popen(sys.argv[2:])
deadline = time.monotonic() + float(sys.argv[1])
while True:
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid:
        break
    if time.monotonic() > deadline:
        proc.kill()
        sys.exit("still running after " + sys.argv[1] + " s")
    time.sleep(0.05)
print(usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_rss_mb(args: list[str], env: dict[str, str], timeout: float) -> tuple[int, bytes, float]:
    """Run a command; (exit status, output, its own peak RSS in MB)."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(timeout), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=timeout + 30,
    )
    out, _, last = done.stdout.rstrip().rpartition(b"\n")
    assert last.isdigit(), done.stdout
    return done.returncode, out, int(last) / 1024


@pytest.mark.slow
def test_update_peak_memory_with_an_alias_bomb_is_bounded(
    run: EngramCli, env: dict[str, str], tmp_path: Path
) -> None:
    vault = normal_vault(tmp_path / "vault", 200)  # parsed in this process
    (vault / "bomb.md").write_text(alias_bomb())
    register(run, env, vault)
    code, out, peak = peak_rss_mb([sys.executable, "-m", "engram", "update"], env, 120)
    assert code == 0, out
    assert b"201 added" in out
    assert peak < 400, f"engram update peaked at {peak:.0f} MB"


def session_processes(sid: int) -> list[str]:
    """Live (not zombie) processes of a session: 'pid cmdline'."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(f"{entry.name} {cmd[:120]}")
    return found


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_sigkilled_update_leaves_no_process_behind(
    run: EngramCli, env: dict[str, str], tmp_path: Path
) -> None:
    vault = normal_vault(tmp_path / "vault", 3000)
    register(run, env, vault)
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "update"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its session id is its pid: every descendant keeps it
    )
    deadline = time.monotonic() + 60
    while len(session_processes(proc.pid)) < 4:  # update, forkserver, tracker, a worker
        assert proc.poll() is None, "update ended before its workers were seen"
        assert time.monotonic() < deadline, session_processes(proc.pid)
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 15
    while (left := session_processes(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []


def test_a_note_past_its_deadline_is_indexed_as_plain_text(
    xdg: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = normal_vault(tmp_path / "vault", 3)
    # a real slow note: markdown-it reads wide tables at well under 1 MB/s
    row = "|" + "a|" * 4000 + "\n"
    table = row + "|" + "-|" * 4000 + "\n" + row * 60
    (vault / "slow.md").write_text("# Slow\n\nslowword\n\n" + table)
    monkeypatch.setattr(loader, "DEADLINE_SECONDS", 0.3)
    monkeypatch.setattr(loader, "DEADLINE_BYTES_PER_SECOND", 10**12)
    db = Database(Path(xdg["XDG_DATA_HOME"]) / "i.sqlite")
    spec = indexer.CollectionSpec("v", vault, "**/*.md")
    with ParsePool(1, isolate=True) as pool:
        started = time.monotonic()
        report = indexer.update(db, [spec], 10_000_000, pool=pool)
        took = time.monotonic() - started
        assert report.added == 4
        warned = [w.message for w in report.warnings if w.path == "slow.md"]
        assert warned and warned[0].startswith("indexed as plain text: not parsed within")
        assert took < 30  # the worker was killed at its deadline, not waited for
        again = indexer.update(db, [spec], 10_000_000, pool=pool)
        assert again.unchanged == 4  # not parsed again while unchanged
    assert matching(db, "slowword") == ["slow.md"]
    db.close()


# --- generated hostile notes ---------------------------------------------------------------


def _bomb(levels: int, width: int) -> str:
    return alias_bomb(levels, width).split("---\n")[1]


frontmatters = st.one_of(
    st.builds(_bomb, st.integers(2, 20), st.integers(2, 12)),
    st.builds(lambda n: "a: " + "[" * n + "]" * n, st.integers(1, 3000)),
    st.builds(lambda n: "a: " + "[" * n, st.integers(1, 3000)),
    st.builds(lambda n: "".join("  " * i + "- x\n" for i in range(n)), st.integers(1, 60)),
    st.just("a: &a [*a]"),
    st.text(alphabet="[]{}:&*-!|>'\"\n #,?x1\t\\", max_size=400),
    st.text(max_size=200),
)
bodies = st.one_of(
    st.builds(lambda n: "> " * n + "deep", st.integers(1, 2000)),
    st.builds(lambda n: "".join("  " * i + "- x\n" for i in range(n)), st.integers(1, 200)),
    st.builds(lambda n: "(k::" + " " * n + "x", st.integers(1, 5000)),
    st.builds(lambda n: "`" * n + "a" + "``" * n, st.integers(1, 1000)),
    st.builds(lambda n: "[[a]] #t " * n, st.integers(1, 1000)),
    st.builds(lambda n: "x" * n, st.integers(1, 20_000)),
    st.text(alphabet="[]()!#`*_>-|:^$\\ \n\t\r\x00\x0b\u202e\ud7ffa", max_size=2000),
    st.text(max_size=500),
)
names = st.one_of(
    st.text(
        alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
        min_size=1,
        max_size=60,
    ),
    st.builds(lambda n: "n" * n, st.integers(200, 250)),  # near the 255-byte limit
    st.sampled_from(["\x01\x1b[31m", " lead", "trail ", "-dash", "a\nb", "\u202eevil"]),
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(fm=st.none() | frontmatters, body=bodies, name=names, raw=st.binary(max_size=300))
def test_generated_hostile_notes_never_break_indexing(
    tmp_path_factory: pytest.TempPathFactory, fm: str | None, body: str, name: str, raw: bytes
) -> None:
    root = tmp_path_factory.mktemp("hostile")
    vault = normal_vault(root / "vault", 3)
    hostile = (f"---\n{fm}\n---\n" if fm is not None else "") + body
    (vault / f"{name}.md").write_bytes(hostile.encode("utf-8", "surrogatepass"))
    (vault / os.fsdecode(b"bad-\xff\xfe-name.md")).write_bytes(b"\xff\xfe bad utf-8 " + raw)
    db = Database(root / "index.sqlite")
    spec = indexer.CollectionSpec("v", vault, "**/*.md")
    tracemalloc.start()
    started = time.monotonic()
    try:
        report = indexer.update(db, [spec], 5_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    took = time.monotonic() - started
    assert took < 20, f"update took {took:.1f}s"
    assert peak < 300 * 1024**2, f"update peaked at {peak / 1024**2:.0f} MB"
    for i in range(3):  # the other notes are all there and searchable
        assert matching(db, f"uniq{i}x") == [f"d{i}/note-{i:05d}.md"]
    hidden = name.startswith(".")  # dot-files are never indexed, as in Obsidian
    assert report.added + report.skipped == (3 if hidden else 4)  # indexed, or skipped + why
    warning = IndexWarning("v", "bad-??-name.md", "name is not valid UTF-8; skipped")
    assert warning in report.warnings
    db.close()


# --- reads never leave the vault -------------------------------------------------------------

SECRET = "topsecretword"


@pytest.fixture
def linked(run: EngramCli, env: dict[str, str], tmp_path: Path) -> Path:
    """A vault with symlinks to a secret outside it, and one inside it, indexed by the CLI."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET} must never be served\n")
    vault = normal_vault(tmp_path / "vault", 3)
    (vault / "passwd.md").symlink_to(outside / "secret.md")
    (vault / "elsewhere").symlink_to(outside)
    (vault / "alias.md").symlink_to(vault / "d0" / "note-00000.md")
    (vault / "victim.md").write_text("# Victim\n\nvictimword before\n")
    register(run, env, vault)
    done = run(env, "update")
    assert "passwd.md: symlink to outside the collection skipped" in done.stderr + done.stdout
    # a note indexed as a file, then replaced by a symlink out of the vault
    (vault / "victim.md").unlink()
    (vault / "victim.md").symlink_to(outside / "secret.md")
    return vault


def test_cli_reads_never_follow_a_symlink_out_of_the_vault(
    run: EngramCli, env: dict[str, str], linked: Path
) -> None:
    for args in (
        ("get", str(linked / "passwd.md")),
        ("get", "elsewhere/secret.md"),
        ("multi-get", "**/*"),
        ("search", SECRET),
    ):
        done = run(env, *args, ok=False)
        assert SECRET not in done.stdout + done.stderr, args
    victim = run(env, "get", "victim.md").stdout
    assert "victimword before" in victim and SECRET not in victim  # the copy indexed before
    listed = run(env, "ls", "v").stdout
    assert "alias.md" not in listed and "d0/note-00000.md" in listed  # once, by its real path


@pytest.mark.slow  # the real `engram mcp` over stdio
def test_mcp_reads_never_follow_a_symlink_out_of_the_vault(
    env: dict[str, str], linked: Path, tmp_path: Path
) -> None:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def ask() -> list[tuple[bool, str]]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "engram", "mcp", "--no-daemon", "--tools", "all"],
            env=env,
        )
        replies = []
        with (tmp_path / "mcp.log").open("a") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                for name, args in (
                    ("get", {"ref": "passwd.md"}),
                    ("get", {"ref": str(linked / "elsewhere" / "secret.md")}),
                    ("get", {"ref": "victim.md"}),
                    ("multi_get", {"paths": ["*.md", "**/*"]}),
                    ("search", {"q": SECRET}),
                    ("search", {"q": "victimword"}),
                ):
                    result = await s.call_tool(name, args)
                    text = "".join(c.text for c in result.content if c.type == "text")
                    replies.append((bool(result.is_error), text))
        return replies

    replies = anyio.run(ask)
    assert all(SECRET not in text for _, text in replies), replies
    assert [error for error, _ in replies] == [True, True, False, False, False, False], replies
    assert "victimword before" in replies[2][1]  # the copy indexed before it became a link
    assert "victim.md" in replies[5][1]


@pytest.mark.slow  # a real `engram serve`
def test_http_documents_never_follow_a_symlink_out_of_the_vault(
    env: dict[str, str], linked: Path, tmp_path: Path
) -> None:
    from tests.integration.server.server_helpers import Daemon

    d = Daemon(env, linked, tmp_path / "serve.log", "--no-watch")
    try:
        d.wait_ready()
        d.wait_indexed()  # its start-up update: victim.md, now a link out, is dropped
        for ref in ("passwd.md", "elsewhere/secret.md", "v/passwd.md", str(linked / "passwd.md")):
            status, body = d.call("GET", f"/v1/documents?ref={ref}")
            assert status == 404 and SECRET not in str(body), (ref, body)
        status, body = d.call("GET", "/v1/documents?ref=victim.md")
        assert status == 404 and SECRET not in str(body)
        for words in (SECRET, "victimword"):
            status, body = d.call("POST", "/v1/search", {"q": words})
            assert status == 200 and SECRET not in str(body), body
    finally:
        assert d.stop() == 0


# --- who may read what Engram writes outside the vault ----------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_index_and_engram_folders_are_private(
    run: EngramCli, env: dict[str, str], tmp_path: Path
) -> None:
    vault = normal_vault(tmp_path / "vault", 3)
    data = Path(env["XDG_DATA_HOME"]) / "engram"
    data.mkdir(parents=True)
    old = data / "index.sqlite"
    Database(old).close()  # an index made by an older version, readable by everyone
    for path in (data, old):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    (Path(f"{old}-wal")).write_bytes(b"")
    os.chmod(f"{old}-wal", 0o644)
    register(run, env, vault)
    run(env, "update")
    config_dir = Path(env["XDG_CONFIG_HOME"]) / "engram"
    assert mode(data) == 0o700
    assert mode(config_dir) == 0o700 and mode(config_dir / "index.yml") == 0o600
    assert mode(old) == 0o600
    with Engram(config.resolve(env)) as e:
        e.search("uniq1x")
        with e.db.write() as conn:  # a write makes SQLite create the WAL and SHM
            conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
        wal, shm = Path(f"{old}-wal"), Path(f"{old}-shm")
        assert wal.exists() and shm.exists()
        assert mode(wal) == 0o600 and mode(shm) == 0o600
        fresh = Path(env["XDG_DATA_HOME"]) / "engram" / "other.sqlite"
        Database(fresh).close()
        assert mode(fresh) == 0o600
        with contextlib.suppress(UnavailableError):  # the cache is made private either way
            e.model_path("embed")
    cache = Path(env["XDG_CACHE_HOME"]) / "engram"
    assert mode(cache) == 0o700


def test_no_file_engram_writes_outside_the_vault_is_readable_by_others(
    run: EngramCli, env: dict[str, str], tmp_path: Path
) -> None:
    vault = normal_vault(tmp_path / "vault", 3)
    register(run, env, vault)
    run(env, "update")
    run(env, "token", "show", "--vault", str(vault))  # its 0600 file
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        assert mode(Path(env[var])) == 0o700  # created by engram, as the XDG spec asks
        for path in (Path(env[var]) / "engram").rglob("*"):
            assert mode(path) & 0o077 == 0, f"{path} is {oct(mode(path))}"
