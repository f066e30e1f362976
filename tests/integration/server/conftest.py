"""Fixtures for the daemon: the app on aiohttp's test server, and real `engram serve` runs."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from server_helpers import TOKEN, Daemon

from engram.server.app import create_app
from engram.server.state import Runtime, ServerConfig
from engram.server.tokens import TokenStore
from engram.service import Engram


@pytest.fixture
def config(indexed: Engram, tiny_vault: Path) -> ServerConfig:
    """The tiny vault (already indexed as `notes`), no watcher, no start-up job."""
    return ServerConfig(
        vault=tiny_vault.resolve(), collection="notes", watch=False, index_on_start=False
    )


@pytest.fixture
def runtime(indexed: Engram, tiny_vault: Path) -> Runtime:
    """A known token, with a file token store in the isolated data dir."""
    store = TokenStore(indexed.settings.data_dir, tiny_vault.resolve(), None)
    return Runtime(TOKEN, store)


@pytest.fixture
async def client(
    aiohttp_client: Any, indexed: Engram, config: ServerConfig, runtime: Runtime
) -> AsyncIterator[TestClient[Any, Any]]:
    """A test client of the app; `auth` headers in AUTH. Closed here, before the facade
    fixtures close the index: an index job a write queued may still be running."""
    client = await aiohttp_client(create_app(indexed, config, runtime))
    yield client
    await client.close()


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[list[Daemon]]:
    """Daemons started by a test, stopped (and killed if stuck) afterwards."""
    started: list[Daemon] = []
    yield started
    for d in started:
        if d.proc.poll() is None:
            d.proc.send_signal(signal.SIGTERM)
            try:
                d.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                d.proc.kill()
                d.proc.wait()
