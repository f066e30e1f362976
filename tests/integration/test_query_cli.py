"""`engram search / vsearch / query` from the command line (in-process CliRunner, tiny real
GGUF models): filter flags, --explain, broken models."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engram import config
from engram.cli import commands  # noqa: F401  (registers the commands)
from engram.cli.main import cli
from engram.service import Engram

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"


@pytest.fixture
def example(xdg: dict[str, str], tiny, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engram]:  # type: ignore[no-untyped-def]
    """The example vault indexed and embedded with the tiny BERT embedder."""
    monkeypatch.setenv("ENGRAM_EMBED_MODEL", str(tiny.embed))
    e = Engram(config.resolve(os.environ))
    e.collection_add(str(EXAMPLE), "example")
    e.update()
    e.embed()
    yield e
    e.close()


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def paths(*args: str) -> list[str]:
    rows: list[dict[str, Any]] = json.loads(invoke(*args, "--json", "--no-daemon").stdout)
    return [r["path"] for r in rows]


@pytest.mark.parametrize("role", ["rerank", "generate"])
def test_query_survives_a_model_that_does_not_load(
    example: Engram, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, role: str
) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    monkeypatch.setenv(f"ENGRAM_{role.upper()}_MODEL", str(junk))
    out = invoke("query", "pricing tiers", "--explain", "--no-daemon")
    stage = "rerank" if role == "rerank" else "expansion"
    assert f"stage {stage}: off ({'reranker' if role == 'rerank' else 'generator'}" in out.stderr
    assert "warning: no " in out.stderr and "junk.gguf" in out.stderr
    assert "Projects/Pricing Model.md" in out.stdout
