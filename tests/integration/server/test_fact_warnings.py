"""Over HTTP a stored fact is a success: what failed after its note was written (here, a
daily note whose marker a person edited) comes back as `warnings`, never as an error."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from server_helpers import AUTH

from engram import codec
from engram.memory import daily
from engram.memory.model import Fact
from engram.service import Engram


async def test_a_stored_fact_is_201_with_warnings_and_the_persons_note_untouched(
    client: TestClient[Any, Any], indexed: Engram, tiny_vault: Path
) -> None:
    indexed.init_vault(str(tiny_vault), name="notes", index=False)
    note = tiny_vault / daily.daily_path("Engram", dt.datetime.now(dt.UTC).date())
    note.parent.mkdir(parents=True)
    mine = f"# My day\n\nonly the end marker is left\n{daily.END}\n"
    note.write_text(mine, "utf-8")
    resp = await client.post("/v1/facts", headers=AUTH, json={"text": "We decided to ship."})
    assert resp.status == 201, await resp.text()
    fact = (await resp.json())["fact"]
    assert (tiny_vault / fact["path"]).is_file()
    assert len(fact["warnings"]) == 1 and "was left as it is" in fact["warnings"][0]
    assert codec.decode(Fact, fact).warnings == tuple(fact["warnings"])  # the CLI's copy
    resp = await client.patch(f"/v1/facts/{fact['id']}", headers=AUTH, json={"importance": 0.9})
    assert resp.status == 200 and (await resp.json())["fact"]["warnings"]
    got = await (await client.get(f"/v1/facts/{fact['id']}", headers=AUTH)).json()
    assert got["fact"]["warnings"] == []  # they belong to a write, not to the fact
    assert note.read_text("utf-8") == mine
