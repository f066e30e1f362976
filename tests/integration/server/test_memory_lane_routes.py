"""The search routes keep the person's notes unless asked, and take negated filters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from server_helpers import AUTH

from engram.service import Engram


async def _paths(client: TestClient[Any, Any], body: dict[str, Any]) -> list[str]:
    async with client.post("/v1/search", json=body, headers=AUTH) as resp:
        assert resp.status == 200, await resp.text()
        return [r["path"] for r in (await resp.json())["results"]]


async def test_search_route_kinds_and_negated_filters(
    client: TestClient[Any, Any], indexed: Engram, tiny_vault: Path
) -> None:
    indexed.init_vault(str(tiny_vault), index=False)  # `notes` becomes a memory vault
    indexed.fact_add("Pricing tiers were decided: three of them")
    q = {"q": "pricing tiers", "n": 50}
    default = await _paths(client, q)
    assert default and not [p for p in default if p.startswith("Engram/")]
    everything = await _paths(client, {**q, "filters": {"kind": ["note", "memory"]}})
    memory = await _paths(client, {**q, "filters": {"kind": ["memory"]}})
    assert memory and all(p.startswith("Engram/") for p in memory)
    assert set(everything) == set(default) | set(memory)
    left = {"kind": ["note", "memory"], "notPath": ["Engram/"]}
    assert await _paths(client, {**q, "filters": left}) == default
    assert await _paths(client, {**q, "q": "pricing tiers kind:all -path:Engram/"}) == default
    async with client.post(
        "/v1/search", json={**q, "filters": {"kind": ["mine"]}}, headers=AUTH
    ) as resp:
        assert resp.status == 400
