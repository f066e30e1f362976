"""The daemon's sync routes on aiohttp's test server: POST /v1/sync, the status it reports
while a run is going, and each fact's sync state."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engram.server.app import create_app
from engram.server.state import Runtime, ServerConfig
from engram.service import Engram
from tests.integration.sync.conftest import Double, Machine

TOKEN = "route-test-token-" + "x" * 26
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def eng(machine: Machine) -> Engram:
    """A synced vault, set up before the test's event loop runs (setup is blocking)."""
    return machine("a")


async def test_sync_now_status_and_fact_states(
    aiohttp_client: Any, eng: Engram, double: Double
) -> None:
    cfg = ServerConfig(
        vault=eng.memory.vault("vault").root, collection="vault", watch=False, index_on_start=False
    )
    client = await aiohttp_client(create_app(eng, cfg, Runtime(TOKEN)))
    resp = await client.post(
        "/v1/facts", json={"text": "Sync state shows in the panel."}, headers=AUTH
    )
    fact = (await resp.json())["fact"]
    assert fact["sync"]["state"] == "pending"
    status = (await (await client.get("/v1/status", headers=AUTH)).json())["sync"]
    assert status["configured"] and status["state"] == "idle" and status["pending"] == 1
    assert "token" not in str(status).lower()

    double.fault(kind="delay", ms=1200, path="facts:upsert")
    running = asyncio.ensure_future(client.post("/v1/sync", json={}, headers=AUTH))
    seen = set()
    for _ in range(40):
        await asyncio.sleep(0.05)
        seen.add((await (await client.get("/v1/status", headers=AUTH)).json())["sync"]["state"])
        if running.done():
            break
    reply = await (await running).json()
    assert reply["report"]["pushed"] == 1 and reply["report"]["error"] is None
    assert "syncing" in seen  # what the plugin's status bar shows
    got = await (await client.get(f"/v1/facts/{fact['id']}", headers=AUTH)).json()
    assert got["fact"]["sync"]["state"] == "synced"
    status = (await (await client.get("/v1/status", headers=AUTH)).json())["sync"]
    assert status["state"] == "idle" and status["pending"] == 0 and status["lastSync"]

    bad = await client.post("/v1/sync", json={"push": False, "pull": False}, headers=AUTH)
    assert bad.status == 400
