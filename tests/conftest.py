"""Shared fixtures: an isolated XDG environment and a tiny but nasty vault."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import settings

from engram import config
from engram.service import Engram

# Tests assert behaviour, not timing: on a loaded CI machine Hypothesis's 200 ms per-example
# deadline fails examples that are merely slow (a test's own @settings still applies on top).
settings.register_profile("engram", deadline=None)
settings.load_profile("engram")

TINY_VAULT: dict[str, str | bytes] = {
    "Welcome.md": (
        "---\ntitle: Welcome\naliases: [Start Here, Home]\ntags: [meta]\n"
        "date: 2024-03-01\n---\n"
        "# Welcome\n\nThis vault is about [[Projects/Pricing|pricing]] and [[Café Notes]].\n"
        "See [[Projects/Pricing#Decision]] and [[Projects/Pricing#^tiers]].\n"
        "![[diagram.png]] and a [markdown link](Projects/Pricing.md).\n"
    ),
    "Projects/Pricing.md": (
        "---\ntags: [project, area/business]\ntype: decision\n---\n"
        "# Pricing\n\nWe compare flat pricing with usage based pricing.\n\n"
        "## Decision\n\nWe decided on three tiers. ^tiers\n\n"
        "| Plan | Link |\n|---|---|\n| Pro | [[Welcome\\|home]] |\n\n"
        "```python\nprice = '[[Not A Link]]'  # #notatag\n```\n\n"
        "status:: accepted\n"
    ),
    "Café Notes.md": "# Café Notes\n\nNotes from the café about espresso and #coffee.\n",
    "日本語/東京.md": "# 東京\n\n東京大学の研究について。機械学習と自然言語処理。\n",
    "Broken.md": (
        "---\ntitle: [unclosed\n  bad: : yaml\n---\n# Broken\n\nBody survives broken YAML.\n"
    ),
    "Empty.md": "",
    "diagram.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
    "Binary.md": b"%PDF-1.4\n\x00\x01\x02 not text",
    ".obsidian/workspace.md": "# Hidden\n\nObsidian config must never be indexed.\n",
    ".trash/Old.md": "# Old\n\nTrashed note.\n",
}


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files (text or bytes) under root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def minilm() -> Path:
    """The real default embedding model's GGUF, pulled and verified once into the user's cache
    ($XDG_CACHE_HOME/engram/models, as engram itself does), then reused."""
    from engram.models import sources

    return sources.pull("default", config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"))


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """XDG data/config/cache dirs inside tmp_path, for this process and subprocesses."""
    env = {
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("ENGRAM_INDEX", "ENGRAM_CONFIG", "NO_COLOR"):
        monkeypatch.delenv(key, raising=False)
    return env


@dataclass(frozen=True)
class Ran:
    """What one `engram` command did, named as subprocess.CompletedProcess names it."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


# The file store, whatever keyring this machine has (a developer's real keyring stays untouched).
NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
# Threads meant to live as long as the process, idle between commands (search/helpers.py).
PROCESS_POOLS = ("engram-helper",)


class EngramCli:
    """`engram ARGS` in this process, through the console script's own entry
    (`engram.cli.main.main`, which turns errors into exit codes), with click's CliRunner
    holding stdin, stdout, stderr and the environment. What a command leaves in the process
    (its State, logging set-up, the keyring it chose) is put back after each run, so runs are
    as independent as separate processes. Crash points, start-up imports, signals and daemons
    need a process of their own: those tests run `python -m engram` and are marked slow."""

    def __call__(
        self, env: Mapping[str, str], *args: str, ok: bool = True, stdin: str | None = None
    ) -> Ran:
        """Run one command with `env` over this process's environment; with `ok`, fail the test
        unless it exits 0."""
        if "ENGRAM_TEST_CRASH_AFTER_RENAMES" in env:
            raise ValueError("a crash point SIGKILLs its process: run `python -m engram`")
        ran = _run_in_process({**NO_KEYRING, **env}, args, stdin)
        if ok:
            assert ran.returncode == 0, f"engram {' '.join(args)}: {ran.stderr}"
        return ran

    def json(self, env: Mapping[str, str], *args: str) -> Any:
        """The output of `engram ARGS --json`, which must succeed."""
        return json.loads(self(env, *args, "--json").stdout)


def _run_in_process(env: Mapping[str, str], args: tuple[str, ...], stdin: str | None) -> Ran:
    from engram.cli.main import _LAST, main

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    # as in a new process: no handler on the root logger, so warnings reach stderr through
    # logging.lastResort (pytest's capture handlers would swallow them)
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    threads, files = set(threading.enumerate()), _open_files()
    try:
        # color=True: click leaves escape codes in the output, as a pipe would get them (not a
        # terminal, so the CLI adds no colour of its own); stripping would hide what leaks
        with CliRunner().isolation(input=stdin, env=dict(env), color=True) as (out, err, _):
            _forget_keyring()  # chosen again, from this run's environment
            try:
                code = main(list(args))
            except SystemExit as exc:  # as the interpreter reads sys.exit's argument
                code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
                if not isinstance(exc.code, int | None):
                    print(exc.code, file=sys.stderr)
            except Exception:
                traceback.print_exc()  # what the interpreter prints before exiting 1
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
            ran = Ran(args, code, out.getvalue().decode(), err.getvalue().decode())
    finally:
        _LAST.clear()
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
        _forget_keyring()
    # a process would have exited: what the command opened, it must have closed
    left = [
        t
        for t in set(threading.enumerate()) - threads
        if not t.name.startswith(PROCESS_POOLS) and not _joined(t)
    ]
    assert not left, f"engram {' '.join(args)} left threads running: {left}"
    # (a file the test itself holds open is left out: SQLite keeps a closed connection's
    # descriptor while another connection of the process holds locks on that file)
    indexes = {f for f in _open_files() - files if ".sqlite" in f}
    assert not indexes, f"engram {' '.join(args)} left open: {sorted(indexes)}"
    return ran


def _forget_keyring() -> None:
    core = sys.modules.get("keyring.core")
    if core is not None:
        core._keyring_backend = None  # type: ignore[attr-defined]  # get_keyring() detects it anew


def _joined(thread: threading.Thread, seconds: float = 5.0) -> bool:
    thread.join(seconds)
    return not thread.is_alive()


def _open_files() -> set[str]:
    """The files this process has open (Linux; empty elsewhere)."""
    found = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                found.add(os.readlink(f"/proc/self/fd/{fd}"))
    return found


@pytest.fixture
def run(xdg: dict[str, str]) -> EngramCli:
    """`run(env, *args, ok=True, stdin=None)`: the `engram` command line in this process, in
    the isolated XDG environment (see EngramCli)."""
    return EngramCli()


@contextmanager
def isolated_env(root: Path, **overrides: str) -> Iterator[None]:
    """For module-scoped fixtures, which the function-scoped `xdg` cannot serve: XDG dirs
    under `root`, no ENGRAM_* settings from the developer's shell, plus `overrides`."""
    with pytest.MonkeyPatch.context() as mp:
        for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            mp.setenv(key, str(root / key.lower()))
        for key in (
            "ENGRAM_INDEX",
            "ENGRAM_CONFIG",
            "ENGRAM_RERANK_MODEL",
            "ENGRAM_GENERATE_MODEL",
        ):
            mp.delenv(key, raising=False)
        for key, value in overrides.items():
            mp.setenv(key, value)
        yield


@pytest.fixture
def tiny_vault(tmp_path: Path) -> Path:
    """A small vault with aliases, heading/block links, an embed, unicode and CJK names,
    broken YAML, a binary file and an .obsidian folder."""
    return write_tree(tmp_path / "vault", TINY_VAULT)


@pytest.fixture
def engram(xdg: dict[str, str]) -> Iterator[Engram]:
    """A facade over an empty index in the isolated environment."""
    e = Engram(config.resolve(os.environ))
    yield e
    e.close()


@pytest.fixture
def indexed(engram: Engram, tiny_vault: Path) -> Engram:
    """The facade with the tiny vault added as collection `notes` and indexed."""
    engram.collection_add(str(tiny_vault), "notes")
    engram.update()
    return engram


@dataclass(frozen=True)
class TinyModels:
    """Paths of the generated models plus the weights they were made from."""

    embed: Path
    embed_q8: Path
    embed_prompted: Path
    rerank: Path
    llama: Path
    chat: Path
    embed_weights: dict[str, np.ndarray]
    rerank_weights: dict[str, np.ndarray]


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyModels:
    """All tiny models, generated into a session temp folder."""
    from safetensors.numpy import load_file

    from engram.models.convert import convert_bert
    from tests.fixtures.tiny_gguf import tiny_bert_dir, write_tiny_llama

    root = tmp_path_factory.mktemp("tiny-models")
    bert = tiny_bert_dir(root / "bert")
    rerank = tiny_bert_dir(root / "rerank", reranker=True)
    prompted = tiny_bert_dir(root / "prompted", seed=3)
    (prompted / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "query: ", "passage": "passage: "}}), encoding="utf-8"
    )
    return TinyModels(
        embed=convert_bert(bert, root / "embed.gguf").path,
        embed_q8=convert_bert(bert, root / "embed.q8_0.gguf", dtype="q8_0").path,
        embed_prompted=convert_bert(prompted, root / "prompted.gguf", dtype="f32").path,
        rerank=convert_bert(rerank, root / "rerank.gguf").path,
        llama=write_tiny_llama(root / "llama.gguf"),
        chat=write_tiny_llama(root / "chat.gguf", chat=True),
        embed_weights=load_file(str(bert / "model.safetensors")),
        rerank_weights=load_file(str(rerank / "model.safetensors")),
    )
