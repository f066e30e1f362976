"""Shared fixtures: an isolated XDG environment and a tiny but nasty vault."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from engram import config
from engram.service import Engram

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
