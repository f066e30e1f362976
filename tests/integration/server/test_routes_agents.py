"""The routes the MCP server uses for memory: recall filters, who stored a fact, memory context
and deep search (on the tiny vault, through aiohttp's test client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from server_helpers import AUTH

from engram.service import Engram


async def post(client: TestClient[Any, Any], path: str, body: Any, status: int = 200) -> Any:
    resp = await client.post(path, json=body, headers=AUTH)
    assert resp.status == status, await resp.text()
    return await resp.json()


async def test_memory_routes_for_agents(
    client: TestClient[Any, Any], indexed: Engram, tiny_vault: Path
) -> None:
    indexed.init_vault(str(tiny_vault), name="notes", index=False)
    body = {
        "text": "Always answer in short sentences.",
        "type": "preference",
        "tags": ["style"],
        "source": "mcp",
        "createdBy": "claude",
        "scope": "writing",
    }
    fact = (await post(client, "/v1/facts", body, 201))["fact"]
    assert (fact["source"], fact["createdBy"], fact["scope"]) == ("mcp", "claude", "writing")
    plain = (await post(client, "/v1/facts", {"text": "We chose three pricing tiers."}, 201))[
        "fact"
    ]
    assert plain["source"] == "engram"  # the plugin says "obsidian"

    hits = await post(client, "/v1/recall", {"q": "short sentences", "type": "preference"})
    assert [h["fact"]["id"] for h in hits["results"]] == [fact["id"]]
    none = await post(client, "/v1/recall", {"q": "short sentences", "tags": ["nothing"]})
    assert none["results"] == []
    notes = await post(client, "/v1/recall", {"q": "espresso", "includeNotes": True})
    assert "Café Notes.md" in {h["path"] for h in notes["results"]}
    every = ["active", "dormant", "merged", "archived", "pruned"]
    listed = await post(client, "/v1/recall", {"tier": "structural", "states": every})
    assert all(h["fact"]["importanceTier"] == "structural" for h in listed["results"])
    await post(client, "/v1/recall", {"tier": "huge"}, status=400)

    context = await post(client, "/v1/memory/context", {"q": "pricing", "budget": 300})
    assert context["profile"] == "default" and context["usedTokens"] <= 300
    assert "We chose three [[Pricing|pricing]] tiers." in context["text"]  # linked when stored
    assert (await post(client, "/v1/memory/context", {}))["budget"] == 4000

    deep = await post(client, "/v1/memory/deep-search", {"q": "pricing tiers", "n": 5})
    assert deep["sources"] == ["local"] and deep["notes"] == ["local only: sync is not configured"]
    top = deep["results"][0]
    assert top["hit"]["fact"]["id"] == plain["id"] and top["source"] == "local"


async def test_agent_route_input_is_validated(client: TestClient[Any, Any]) -> None:
    for method, path, body in (
        ("POST", "/v1/memory/context", {"profile": "party"}),
        ("POST", "/v1/memory/context", {"budget": -1}),
        ("POST", "/v1/memory/deep-search", {}),
        ("POST", "/v1/memory/deep-search", {"q": "x", "n": 0}),
        ("POST", "/v1/recall", {"q": "x", "includeNotes": "yes"}),
        ("POST", "/v1/recall", {"q": "x", "tags": "style"}),
        ("POST", "/v1/recall", {"q": "x", "states": ["asleep"]}),
        ("POST", "/v1/facts", {"text": "x", "createdBy": ""}),
        ("PATCH", "/v1/facts/abc", {"source": "mcp"}),  # where a fact came from never changes
    ):
        resp = await client.request(method, path, json=body, headers=AUTH)
        assert resp.status == 400, (path, body, await resp.text())
