"""The daemon's sync routes on aiohttp's test server: POST /v1/sync, the status it reports
while a run is going, and each fact's sync state."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from engram.server.app import create_app
from engram.server.state import JOBS, Runtime, ServerConfig
from engram.service import Engram
from tests.integration.sync.conftest import Double, Machine

TOKEN = "route-test-token-" + "x" * 26
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def sync_state(client: TestClient[Any, Any], until: Callable[[dict[str, Any]], bool]) -> Any:
    """`GET /v1/status`'s sync part once `until` holds (polled: a run's state changes on the
    server's time, not the test's), failing after 30 s."""
    deadline = time.monotonic() + 30
    while True:
        status = (await (await client.get("/v1/status", headers=AUTH)).json())["sync"]
        if until(status):
            return status
        assert time.monotonic() < deadline, status
        await asyncio.sleep(0.02)


@pytest.fixture
def eng(machine: Machine) -> Engram:
    """A synced vault, set up before the test's event loop runs (setup is blocking)."""
    return machine("a")


async def test_sync_now_status_and_fact_states(
    aiohttp_client: Any, eng: Engram, double: Double
) -> None:
    cfg = ServerConfig(
        vault=eng.memory.vault("vault").root,
        collection="vault",
        watch=False,
        index_on_start=False,
        sync=False,  # no periodic run: only the runs this test asks for change the state
    )
    client = await aiohttp_client(create_app(eng, cfg, Runtime(TOKEN)))
    resp = await client.post(
        "/v1/facts", json={"text": "Sync state shows in the panel."}, headers=AUTH
    )
    fact = (await resp.json())["fact"]
    assert fact["syncState"] == "pending"
    status = await sync_state(client, lambda s: s["state"] == "idle")
    assert status["configured"] and status["pending"] == 1
    assert "token" not in str(status).lower()

    # a run holds at its first local step while the writer is busy: "syncing" for as long
    # as the test needs to see it, however loaded the machine
    gate = threading.Event()
    holder = asyncio.ensure_future(client.app[JOBS].write(gate.wait, 60))
    running = asyncio.ensure_future(client.post("/v1/sync", json={}, headers=AUTH))
    await sync_state(client, lambda s: s["state"] == "syncing")  # what the plugin's bar shows
    assert not running.done()
    gate.set()
    assert await holder
    reply = await (await running).json()
    assert reply["report"]["pushed"] == 1 and reply["report"]["error"] is None
    got = await (await client.get(f"/v1/facts/{fact['id']}", headers=AUTH)).json()
    assert got["fact"]["syncState"] == "synced"
    status = await sync_state(client, lambda s: s["state"] != "syncing")
    assert status["state"] == "idle" and status["pending"] == 0 and status["lastSync"]

    bad = await client.post("/v1/sync", json={"push": False, "pull": False}, headers=AUTH)
    assert bad.status == 400
    await client.close()  # before the facade's fixture closes the index under a queued job
