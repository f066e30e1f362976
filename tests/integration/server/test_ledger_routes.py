"""POST /v1/ledger/raw, /v1/ledger/observe, /v1/reflect and recall's agent on the real
aiohttp server."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from server_helpers import AUTH

from engram.service import Engram
from engram.store import activity


async def test_raw_lines_round_trip_and_observe_is_idempotent(
    client: TestClient[Any, Any], indexed: Engram, tiny_vault: Path
) -> None:
    indexed.init_vault(str(tiny_vault), name="notes", index=False)
    lines = [
        {
            "role": "user",
            "text": "We decided to ship the beta on Friday",
            "ts": "2026-03-05T09:00:00Z",
        },
        {"role": "assistant", "text": "Noted.", "ts": "2026-03-05T09:00:05Z", "model": "m"},
    ]
    numbered = [[n, line] for n, line in enumerate(lines, 1)]
    resp = await client.post(
        "/v1/ledger/raw", headers=AUTH, json={"agent": "bot", "lines": numbered}
    )
    assert resp.status == 201, await resp.text()
    got = await resp.json()
    rel = "Engram/ledger/raw/bot/2026/03/05.jsonl"
    assert got == {
        "agent": "bot",
        "appended": 2,
        "skipped": 0,
        "lines": [{"path": rel, "line": 1}, {"path": rel, "line": 2}],
    }
    stored = [json.loads(x) for x in (tiny_vault / rel).read_text().splitlines()]
    assert [s["text"] for s in stored] == [x["text"] for x in lines] and stored[1]["model"] == "m"

    body = {"day": "2026-03-05"}
    first = await (await client.post("/v1/ledger/observe", headers=AUTH, json=body)).json()
    assert first["added"] == 2 and first["path"] == "Engram/ledger/observations/2026/03/05.md"
    obs = tiny_vault / first["path"]
    before = obs.read_bytes()
    again = await (await client.post("/v1/ledger/observe", headers=AUTH, json=body)).json()
    assert again["added"] == 0 and obs.read_bytes() == before
    assert "(raw bot/2026/03/05.jsonl:1) ^raw-" in before.decode()


async def test_bad_input_is_a_4xx_and_nothing_is_appended(
    client: TestClient[Any, Any], indexed: Engram, tiny_vault: Path
) -> None:
    indexed.init_vault(str(tiny_vault), name="notes", index=False)
    good = {"role": "user", "text": "fine"}
    for body, words in [
        ({"agent": "../etc", "lines": [[1, good]]}, "agent name"),
        ({"agent": "bot", "lines": []}, "lines"),
        ({"agent": "bot", "lines": [good]}, "lines[0] must be a list"),
        ({"agent": "bot", "lines": [[1, good], [2, {"role": "user"}]]}, "line 2"),
        (
            {"agent": "bot", "lines": [[1, good], [7, {"role": "u", "text": "x", "ts": "x"}]]},
            "line 7",
        ),
    ]:
        resp = await client.post("/v1/ledger/raw", headers=AUTH, json=body)
        assert resp.status == 400, await resp.text()
        assert words in (await resp.json())["error"]["message"]
    assert not (tiny_vault / "Engram/ledger/raw").exists()
    resp = await client.post("/v1/ledger/observe", headers=AUTH, json={"day": "last week"})
    assert resp.status == 400 and "single day" in (await resp.json())["error"]["message"]


async def test_reflect_route_writes_once_and_refuses_bad_weeks(
    client: TestClient[Any, Any], indexed: Engram, tiny_vault: Path
) -> None:
    indexed.init_vault(str(tiny_vault), name="notes", index=False)
    indexed.fact_add("We decided to keep three pricing tiers", vault="notes")
    body = {"week": "this week"}
    first = await (await client.post("/v1/reflect", headers=AUTH, json=body)).json()
    assert first["written"] is True and first["facts"] == 1
    assert (tiny_vault / first["path"]).is_file()
    again = await (await client.post("/v1/reflect", headers=AUTH, json=body)).json()
    assert again == {**first, "written": False}
    resp = await client.post("/v1/reflect", headers=AUTH, json={"week": "2025-W53"})
    assert resp.status == 400


async def test_a_recall_naming_its_agent_is_counted_by_the_daemon(
    client: TestClient[Any, Any], indexed: Engram, tiny_vault: Path
) -> None:
    indexed.init_vault(str(tiny_vault), name="notes", index=False)
    for body in ({"q": "pricing", "agent": "claude"}, {"q": "pricing"}):
        resp = await client.post("/v1/recall", headers=AUTH, json=body)
        assert resp.status == 200, await resp.text()
    today = indexed.clock().date()
    tomorrow = (today + dt.timedelta(days=1)).isoformat()
    assert activity.recalls(indexed.db.conn, "notes", today.isoformat(), tomorrow) == {"claude": 1}
