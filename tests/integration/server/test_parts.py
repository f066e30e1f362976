"""The daemon's parts on their own: token store, discovery files, debouncer, path filter,
and the facade methods the daemon added (vault collection, safe paths, changed paths)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from engram.errors import InvalidInputError
from engram.server import discovery
from engram.server.discovery import Discovery, IndexLock
from engram.server.run import OPTIONAL_CAPABILITIES, capabilities
from engram.server.tokens import TokenStore
from engram.server.watcher import Debouncer, relevant
from engram.service import Engram


class MemoryKeyring:
    """A keyring backend in a dict (the real ones need a desktop session)."""

    def __init__(self, fail: bool = False) -> None:
        self.items: dict[tuple[str, str], str] = {}
        self.fail = fail

    def get_password(self, service: str, username: str) -> str | None:
        if self.fail:
            raise RuntimeError("locked")
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        if self.fail:
            raise RuntimeError("locked")
        self.items[(service, username)] = password


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_file_token_store_is_private_and_rotates(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "data", tmp_path / "vault", None)
    assert store.kind == "file" and store.get() is None
    token = store.get_or_create()
    assert len(token) == 43 and store.get_or_create() == token
    assert mode(store.file) == 0o600 and mode(store.file.parent) == 0o700
    assert str(tmp_path / "vault") not in store.file.name  # the file name does not leak paths
    assert store.rotate() != token and store.get() != token
    other = TokenStore(tmp_path / "data", tmp_path / "other-vault", None)
    assert other.get_or_create() != store.get()


def test_keyring_store_keeps_one_entry_per_vault(tmp_path: Path) -> None:
    ring = MemoryKeyring()
    store = TokenStore(tmp_path, tmp_path / "vault", ring)
    token = store.get_or_create()
    assert store.kind == "keyring"
    assert ring.items == {("engram", str(tmp_path / "vault")): token}
    assert not store.file.exists()


def test_a_broken_keyring_falls_back_to_the_file(tmp_path: Path) -> None:
    store = TokenStore(tmp_path, tmp_path / "vault", MemoryKeyring(fail=True))
    token = store.get_or_create()
    assert store.kind == "file" and store.file.read_text().strip() == token


def test_the_fail_backend_means_no_keyring() -> None:
    code = "from engram.secrets import system_keyring; print(system_keyring() is None)"
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def info(tmp_path: Path, pid: int, port: int = 1) -> Discovery:
    return Discovery(port, "tok", pid, "2024-01-01T00:00:00Z", str(tmp_path), ("search",))


def test_discovery_file_shape_and_mode(tmp_path: Path) -> None:
    path = discovery.discovery_path(tmp_path, ".obsidian")
    assert path == tmp_path / ".obsidian" / "plugins" / "engram" / "discovery.json"
    discovery.write(path, info(tmp_path, os.getpid(), 4321))
    assert mode(path) == 0o600
    data = json.loads(path.read_text())
    assert {k: data[k] for k in ("name", "protocol", "url", "port", "token", "vault")} == {
        "name": "engram",
        "protocol": 2,
        "url": "http://127.0.0.1:4321",
        "port": 4321,
        "token": "tok",
        "vault": str(tmp_path),
    }
    assert set(data) >= {"version", "pid", "startedAt", "capabilities"}
    path.chmod(0o644)  # replacing keeps it private even if someone loosened it
    discovery.write(path, info(tmp_path, os.getpid(), 4322))
    assert mode(path) == 0o600
    discovery.remove_if_ours(path, os.getpid() + 1)
    assert path.exists()
    discovery.remove_if_ours(path, os.getpid())
    assert not path.exists()


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "..\\x", "a\x00"])
def test_config_dir_must_be_one_folder_name(bad: str) -> None:
    with pytest.raises(InvalidInputError):
        discovery.check_config_dir(bad)


def test_stale_discovery_is_not_live(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = tmp_path / "d.json"
    discovery.write(path, info(tmp_path, dead.pid))
    assert not discovery.live(discovery.read(path))
    discovery.refuse_if_running(path, tmp_path / "none.json")  # stale: no error
    discovery.write(path, info(tmp_path, os.getppid(), 1))  # alive, but nothing answers
    assert not discovery.live(discovery.read(path))
    path.write_text("{garbage")
    assert discovery.read(path) is None


def test_index_lock_is_exclusive(tmp_path: Path) -> None:
    first, second = IndexLock(tmp_path, "index"), IndexLock(tmp_path, "index")
    assert first.acquire()
    code = (
        "import sys; from pathlib import Path; from engram.server.discovery import IndexLock;"
        f"sys.exit(0 if IndexLock(Path({str(tmp_path)!r}), 'index').acquire() else 3)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 3
    first.release()
    assert second.acquire()
    second.release()


def test_debouncer_waits_per_key() -> None:
    d = Debouncer(2.0)
    d.touch("a.md", 0.0)
    d.touch("b.md", 1.0)
    assert d.due(1.9) == []
    d.touch("a.md", 1.5)  # still typing in a.md
    assert d.due(3.0) == ["b.md"]
    assert len(d) == 1
    assert d.due(3.4) == []
    assert d.due(3.5) == ["a.md"]
    assert len(d) == 0


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/v/Note.md", "Note.md"),
        ("/v/Projects/Plan.md", "Projects/Plan.md"),
        ("/v/.obsidian/plugins/engram/discovery.json", None),
        ("/v/.trash/Old.md", None),
        ("/v/.git/HEAD", None),
        ("/v/cfg/app.json", None),
        ("/v/node_modules/x.md", None),
        ("/v/Note.md~", None),
        ("/v/.Note.md.swp", None),
        ("/other/Note.md", None),
        ("/v", None),
    ],
)
def test_watcher_ignores_config_and_dot_folders(path: str, expected: str | None) -> None:
    assert relevant(Path("/v"), path, "cfg") == expected


def test_vault_collection_is_found_or_added(engram: Engram, tmp_path: Path) -> None:
    vault = tmp_path / "My Vault!"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    name = engram.vault_collection(vault)
    assert name == "My-Vault"
    assert engram.vault_collection(str(vault) + "/") == name
    other = tmp_path / "x" / "My Vault!"
    other.mkdir(parents=True)
    assert engram.vault_collection(other) == "My-Vault-2"


def test_note_path_normalizes_and_refuses_escapes(indexed: Engram) -> None:
    assert indexed.note_path("notes", "Projects/./Pricing.md") == "Projects/Pricing.md"
    assert indexed.note_path("notes", "Projects\\Pricing.md") == "Projects/Pricing.md"
    assert indexed.note_path("notes", "a/../Welcome.md") == "Welcome.md"
    for bad in ("../x.md", "/etc/passwd", "", ".", "x\x00.md"):
        with pytest.raises(InvalidInputError):
            indexed.note_path("notes", bad)


def test_expand_changes_covers_folders(indexed: Engram, tiny_vault: Path) -> None:
    # attachments too: links resolve to them (only notes are indexed)
    assert indexed.expand_changes("notes", ["Welcome.md", "diagram.png"]) == {
        "Welcome.md",
        "diagram.png",
    }
    assert indexed.expand_changes("notes", ["Projects"]) == {"Projects/Pricing.md"}
    (tiny_vault / "Projects").rename(tiny_vault / ".hidden-projects")
    assert indexed.expand_changes("notes", ["Projects"]) == {"Projects/Pricing.md"}
    assert indexed.expand_changes("notes", [".obsidian/workspace.md"]) == set()


def test_discovery_lists_every_capability_the_build_has(engram: Engram) -> None:
    for cap, method in OPTIONAL_CAPABILITIES.items():
        assert callable(getattr(Engram, method, None)), f"{cap}: no Engram.{method}"
    assert capabilities(engram, watch=True) == (
        *("search", "status", "index", "documents", "notes.metadata", "active-note"),
        *("vsearch", "query", "recall", "facts", "graph", "sync", "notes.write", "watch"),
    )
    assert "watch" not in capabilities(engram, watch=False)
