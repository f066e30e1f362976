"""`GET /v1/documents` takes a title, an alias or a `[[wikilink]]` as `engram get` does."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient
from server_helpers import AUTH

from engram.codec import encode
from engram.service import Engram


async def test_documents_by_title_alias_and_link(
    client: TestClient[Any, Any], indexed: Engram
) -> None:
    for ref in ("Start Here", "[[Home]]", "welcome", "[[Welcome|home page]]"):
        async with client.get("/v1/documents", params={"ref": ref}, headers=AUTH) as resp:
            assert resp.status == 200, ref
            assert (await resp.json())["document"]["path"] == "Welcome.md"
    ref = "[[Projects/Pricing#Decision]]"
    async with client.get("/v1/documents", params={"ref": ref}, headers=AUTH) as resp:
        doc = (await resp.json())["document"]
    assert doc == encode(indexed.get(ref)) and doc["text"].startswith("## Decision")
    async with client.get("/v1/documents", params={"ref": "[[Pricng]]"}, headers=AUTH) as resp:
        assert resp.status == 404
        error = (await resp.json())["error"]
    assert "Projects/Pricing.md" in error["hint"]
