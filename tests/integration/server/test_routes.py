"""The routes on the tiny vault: shapes the plugin relies on, and the facade's answers."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import threading
import time
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from server_helpers import AUTH, TOKEN

from engram import codec
from engram.codec import encode
from engram.server import openapi
from engram.server.routes import ACTIVE_NOTE_STALE_SECONDS
from engram.server.state import CONFIG, ENGRAM, JOBS, RUNTIME, Runtime
from engram.service import Engram


async def get_json(client: TestClient[Any, Any], path: str, **kw: Any) -> Any:
    resp = await client.get(path, headers=AUTH, **kw)
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def post(client: TestClient[Any, Any], path: str, body: Any, status: int = 200) -> Any:
    resp = await client.post(path, json=body, headers=AUTH)
    assert resp.status == status, await resp.text()
    return await resp.json() if resp.status != 204 else None


async def wait_idle(client: TestClient[Any, Any]) -> dict[str, Any]:
    """The status once no index job runs or waits (a deadline, not a count: a loaded machine
    indexes slower)."""
    deadline = time.monotonic() + 60
    while True:
        status = await get_json(client, "/v1/status")
        if status["indexing"]["state"] == "idle":
            return status
        assert time.monotonic() < deadline, "indexing did not finish"
        await asyncio.sleep(0.025)


async def test_health_is_the_contract(client: TestClient[Any, Any]) -> None:
    resp = await client.get("/v1/health")
    assert await resp.json() == {"ok": True, "name": "engram", "version": "0.1.0", "protocol": 2}


async def test_status_has_every_field_the_plugin_reads(
    client: TestClient[Any, Any], tiny_vault: Path
) -> None:
    status = await get_json(client, "/v1/status")
    assert status["vault"] == {"path": str(tiny_vault.resolve()), "collection": "notes"}
    assert status["documents"] == 6
    assert status["chunks"] == 0 and status["embedded"] == 0
    assert status["indexing"]["state"] == "idle"
    assert {"done", "total", "lastUpdate"} <= status["indexing"].keys()
    for role in ("embed", "rerank", "generate"):
        assert status["models"][role]["state"] in {"loaded", "available", "missing"}
    assert status["watcher"] == {"enabled": False, "queue": 0, "error": None}
    assert status["queryStages"]["keyword"] == "on"
    assert status["queryStages"]["rerank"].startswith("off (")
    assert status["sync"]["configured"] is False and status["sync"]["state"] == "off"
    assert status["lastError"] is None
    assert status["facts"] is None  # `notes` is a plain collection, not a memory vault


async def test_query_search_matches_the_facade(
    client: TestClient[Any, Any], indexed: Engram
) -> None:
    reply = await post(client, "/v1/search", {"q": "pricing", "n": 5})
    expected = encode(indexed.search("pricing", n=5))
    assert reply == {"results": expected}
    assert reply["results"][0]["path"] == "Projects/Pricing.md"
    full = await post(client, "/v1/search", {"q": "pricing", "n": None, "full": True})
    assert full["results"][0]["body"]
    tagged = await post(client, "/v1/search", {"q": "pricing", "filters": {"tags": ["project"]}})
    assert [r["path"] for r in tagged["results"]] == ["Projects/Pricing.md"]


async def test_keyword_search_is_answered_while_model_work_fills_its_threads(
    client: TestClient[Any, Any], indexed: Engram, monkeypatch: Any
) -> None:
    """Reads that may run a model (seconds with a reranker) have threads of their own: with
    every one of them busy, and as many again waiting, a keyword search is still answered."""
    release = threading.Event()
    started = threading.Semaphore(0)

    def slow(original: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started.release()
            release.wait(30)
            return original(*args, **kwargs)  # whatever it answers (503 without vectors)

        return run

    for name in ("vsearch", "query_run", "recall"):
        monkeypatch.setattr(indexed, name, slow(getattr(indexed, name)))
    config = client.app[CONFIG]  # type: ignore[union-attr]

    async def model_work(path: str, body: dict[str, str]) -> int:
        async with client.post(path, json=body, headers=AUTH) as resp:
            return resp.status

    busy = [
        asyncio.ensure_future(model_work(path, {"q": "pricing"}))
        for path in ("/v1/vsearch", "/v1/query") * config.model_readers
    ]
    busy.append(asyncio.ensure_future(model_work("/v1/recall", {"q": "pricing"})))
    try:
        for _ in range(config.model_readers):
            assert await asyncio.to_thread(started.acquire, True, 10)
        reply = await asyncio.wait_for(post(client, "/v1/search", {"q": "pricing"}), 10)
        assert reply["results"][0]["path"] == "Projects/Pricing.md"
        assert not any(task.done() for task in busy)
    finally:
        release.set()
        assert 500 not in await asyncio.gather(*busy)  # (503: no vectors to search)
    assert 2 <= config.readers <= 8


async def test_query_rejects_bad_input(client: TestClient[Any, Any]) -> None:
    for body in (
        {},
        {"q": ""},
        {"q": 3},
        {"q": "x", "mode": "search"},
        {"q": "x", "n": 0},
        {"q": "x", "n": "ten"},
        {"q": "x", "n": True},
        {"q": "x", "collections": "notes"},
        {"q": "x", "filters": {"color": "red"}},
        {"q": "x", "filters": {"after": "someday"}},
        {"q": "x", "minScore": 2},
        {"q": "x", "filters": ["tag"]},
    ):
        resp = await client.post("/v1/search", json=body, headers=AUTH)
        assert resp.status == 400, body
        assert (await resp.json())["error"]["code"] == "invalid_input"
    resp = await client.post("/v1/search", json={"q": "x", "collections": ["nope"]}, headers=AUTH)
    assert resp.status == 404


async def test_facts_recall_and_graph_through_http(
    client: TestClient[Any, Any], indexed: Engram, tiny_vault: Path
) -> None:
    indexed.init_vault(str(tiny_vault), name="notes", facts_root="Memory/Engram", index=False)
    status = await get_json(client, "/v1/status")
    assert status["facts"] == {"root": "Memory/Engram"}  # the plugin's facts folder
    resp = await client.post(
        "/v1/facts",
        headers=AUTH,
        json={"text": "We decided to keep three pricing tiers for Brewline.", "tags": ["pricing"]},
    )
    assert resp.status == 201, await resp.text()
    fact = (await resp.json())["fact"]
    assert fact["factType"] == "decision" and fact["path"].startswith("Memory/Engram/decisions/")
    assert (tiny_vault / fact["path"]).is_file()
    got = await (await client.get(f"/v1/facts/{fact['id']}", headers=AUTH)).json()
    assert got["fact"]["id"] == fact["id"]
    resp = await client.patch(f"/v1/facts/{fact['id']}", headers=AUTH, json={"importance": 0.9})
    assert (await resp.json())["fact"]["importanceScore"] == 0.9
    recent = await (await client.get("/v1/facts", headers=AUTH, params={"limit": "5"})).json()
    assert [f["id"] for f in recent["facts"]] == [fact["id"]]
    found = await (
        await client.post("/v1/recall", headers=AUTH, json={"q": "pricing tiers"})
    ).json()
    assert found["results"][0]["fact"]["id"] == fact["id"]
    meta = await (
        await client.get("/v1/notes/metadata", headers=AUTH, params={"path": fact["path"]})
    ).json()
    assert meta["fact"]["id"] == fact["id"] and meta["coverage"]["indexed"]
    resp = await client.post(
        "/v1/facts/from-note",
        headers=AUTH,
        json={"path": "Café Notes.md", "selection": "espresso and #coffee"},
    )
    assert resp.status == 201
    assert (await resp.json())["fact"]["text"].startswith("espresso")
    gone = await (await client.delete(f"/v1/facts/{fact['id']}", headers=AUTH)).json()
    assert gone["fact"]["lifecycleState"] == "archived"
    near = await (
        await client.get(
            "/v1/graph/neighbors", headers=AUTH, params={"path": "Welcome.md", "depth": "1"}
        )
    ).json()
    assert "Projects/Pricing.md" in {n["path"] for n in near["neighbors"]}
    resp = await client.post("/v1/query", json={"q": "pricing"}, headers=AUTH)
    assert resp.status == 200 and (await resp.json())["results"]
    resp = await client.post("/v1/sync", headers=AUTH)
    assert resp.status == 503
    assert "not configured" in (await resp.json())["error"]["message"]


async def test_fact_input_is_validated_before_anything_else(client: TestClient[Any, Any]) -> None:
    for method, path, body in (
        ("POST", "/v1/facts", {"text": ""}),
        ("POST", "/v1/facts", {"text": "x", "importance": 3}),
        ("POST", "/v1/facts", {"text": "x", "colour": "red"}),
        ("PATCH", "/v1/facts/abc", {}),
        ("PATCH", "/v1/facts/abc", {"id": "other", "importance": 0.5}),
        ("PATCH", "/v1/facts/" + "a" * 129, {"importance": 0.5}),
    ):
        resp = await client.request(method, path, json=body, headers=AUTH)
        assert resp.status == 400, (path, body)


async def test_tags_are_the_tag_pane_as_the_facade_gives_it(
    client: TestClient[Any, Any], indexed: Engram
) -> None:
    reply = await get_json(client, "/v1/tags", params={"sort": "count"})
    assert reply == codec.encode(indexed.tags(sort="count"))
    assert reply["tags"] and all(t["count"] >= 1 for t in reply["tags"])
    one = await get_json(client, "/v1/tags", params=[("collections", "notes")])
    assert one == codec.encode(indexed.tags(["notes"]))
    resp = await client.get("/v1/tags", params={"sort": "size"}, headers=AUTH)
    assert resp.status == 400 and "sort must be one of" in await resp.text()
    resp = await client.get("/v1/tags", params={"collections": "nope"}, headers=AUTH)
    assert resp.status == 404


async def test_note_metadata_has_frontmatter_backlinks_and_coverage(
    client: TestClient[Any, Any],
) -> None:
    meta = await get_json(client, "/v1/notes/metadata", params={"path": "Projects/Pricing.md"})
    assert meta["path"] == "Projects/Pricing.md"
    assert meta["title"] == "Pricing"
    assert meta["frontmatter"]["type"] == "decision"
    assert meta["fact"] is None and meta["related"] == []
    linking = {(b["path"], b["line"]) for b in meta["backlinks"]}
    assert ("Welcome.md", 9) in linking  # [[Projects/Pricing|pricing]]
    assert ("Welcome.md", 11) in linking  # [markdown link](Projects/Pricing.md)
    assert all(b["path"] != "Projects/Pricing.md" for b in meta["backlinks"])
    first = next(b for b in meta["backlinks"] if b["line"] == 9)
    assert "[[Projects/Pricing|pricing]]" in first["context"]
    assert meta["coverage"]["indexed"] is True and meta["coverage"]["indexedAt"]
    welcome = await get_json(client, "/v1/notes/metadata", params={"path": "Welcome.md"})
    assert [b["path"] for b in welcome["backlinks"]] == ["Projects/Pricing.md"]
    resp = await client.get("/v1/notes/metadata", params={"path": "Nope.md"}, headers=AUTH)
    assert resp.status == 404


async def test_a_new_unindexed_note_has_metadata_too(
    client: TestClient[Any, Any], tiny_vault: Path
) -> None:
    (tiny_vault / "Fresh.md").write_text("# Fresh\n")
    meta = await get_json(client, "/v1/notes/metadata", params={"path": "Fresh.md"})
    assert meta["coverage"]["indexed"] is False and meta["title"] == "Fresh"


async def test_index_paths_deleted_and_renamed(
    client: TestClient[Any, Any], tiny_vault: Path
) -> None:
    (tiny_vault / "New Note.md").write_text("# New\n\nzebracorn sighting\n")
    reply = await post(client, "/v1/index", {"paths": ["New Note.md"]}, status=202)
    assert set(reply["job"]) == {"id", "state"}
    await wait_idle(client)
    found = await post(client, "/v1/query", {"q": "zebracorn"})
    assert [r["path"] for r in found["results"]] == ["New Note.md"]

    (tiny_vault / "New Note.md").rename(tiny_vault / "Moved.md")
    await post(
        client, "/v1/index", {"renamed": [{"from": "New Note.md", "to": "Moved.md"}]}, status=202
    )
    status = await wait_idle(client)
    assert status["indexing"]["lastJob"]["summary"].startswith("0 added, 0 updated, 1 renamed")
    found = await post(client, "/v1/query", {"q": "zebracorn"})
    assert [r["path"] for r in found["results"]] == ["Moved.md"]

    (tiny_vault / "Moved.md").unlink()
    await post(client, "/v1/index", {"deleted": ["Moved.md"]}, status=202)
    await wait_idle(client)
    assert (await post(client, "/v1/query", {"q": "zebracorn"}))["results"] == []


async def test_a_folder_moved_away_is_one_change(
    client: TestClient[Any, Any], tiny_vault: Path, tmp_path: Path
) -> None:
    (tiny_vault / "Projects").rename(tmp_path / "Projects-away")
    await post(client, "/v1/index", {"deleted": ["Projects"]}, status=202)
    await wait_idle(client)
    found = await post(client, "/v1/query", {"q": "pricing"})
    assert found["results"] and all(r["path"] != "Projects/Pricing.md" for r in found["results"])


async def test_reindex_everything_and_merge_waiting_jobs(client: TestClient[Any, Any]) -> None:
    jobs = client.app[JOBS]
    first = jobs.submit(["Welcome.md"], "test")
    second = jobs.submit(["Empty.md"], "test")
    assert second is first or first.state != "queued"
    reply = await post(client, "/v1/index", None, status=202)
    assert reply["job"]["state"] in {"queued", "running"}
    status = await wait_idle(client)
    assert status["indexing"]["lastJob"]["state"] == "done"


async def test_active_note_round_trip(client: TestClient[Any, Any]) -> None:
    assert (await get_json(client, "/v1/active-note")) == {"activeNote": None}
    body = {"path": "Projects/Pricing.md", "selection": "three tiers", "cursorLine": 12}
    resp = await client.post("/v1/active-note", json=body, headers=AUTH)
    assert resp.status == 204
    note = (await get_json(client, "/v1/active-note"))["activeNote"]
    assert {k: note[k] for k in body} == body
    assert note["title"] == "Pricing"
    resp = await client.post("/v1/active-note", json={"path": "Welcome.md"}, headers=AUTH)
    assert (await get_json(client, "/v1/active-note"))["activeNote"]["title"] == "Welcome"
    resp = await client.post("/v1/active-note", json={"path": None}, headers=AUTH)
    assert resp.status == 204  # Obsidian closed the note (or the plugin unloaded): forgotten
    assert (await get_json(client, "/v1/active-note")) == {"activeNote": None}


async def test_an_active_note_nobody_refreshed_for_minutes_is_not_reported(
    client: TestClient[Any, Any], runtime: Runtime
) -> None:
    await client.post("/v1/active-note", json={"path": "Welcome.md"}, headers=AUTH)
    note = runtime.active_note
    assert note is not None
    old = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=ACTIVE_NOTE_STALE_SECONDS + 5)
    runtime.active_note = dataclasses.replace(note, at=old.isoformat())  # Obsidian crashed
    assert (await get_json(client, "/v1/active-note")) == {"activeNote": None}
    await client.post("/v1/active-note", json={"path": "Welcome.md"}, headers=AUTH)
    assert (await get_json(client, "/v1/active-note"))["activeNote"]["path"] == "Welcome.md"
    resp = await client.post("/v1/active-note", json={"path": "Nope/Missing.md"}, headers=AUTH)
    assert resp.status == 204  # not indexed yet: the file name is the title
    assert (await get_json(client, "/v1/active-note"))["activeNote"]["title"] == "Missing"


async def test_note_metadata_lists_related_notes_once_embedded(
    aiohttp_client: Any, xdg: dict[str, str], tiny_vault: Path
) -> None:
    """Related notes by meaning (the deterministic fake embedder: shared words are close)."""
    import os

    from engram import config
    from engram.models.fake import FakeEmbedder
    from engram.server.app import create_app
    from engram.server.state import ServerConfig
    from engram.server.tokens import TokenStore

    cfg = ServerConfig(vault=tiny_vault.resolve(), collection="notes", watch=False)
    cfg = dataclasses.replace(cfg, index_on_start=False)
    with Engram(config.resolve(os.environ), embedder=FakeEmbedder(dim=64)) as e:
        e.collection_add(str(tiny_vault), "notes")
        e.update()
        e.embed()
        runtime = Runtime(TOKEN, TokenStore(e.settings.data_dir, tiny_vault.resolve(), None))
        client = await aiohttp_client(create_app(e, cfg, runtime))
        meta = await get_json(client, "/v1/notes/metadata", params={"path": "Projects/Pricing.md"})
        related = meta["related"]
        assert 1 <= len(related) <= 5
        assert "Projects/Pricing.md" not in [r["path"] for r in related]  # never itself
        assert (related[0]["path"], related[0]["title"]) == ("Welcome.md", "Welcome")
        scores = [r["score"] for r in related]
        assert scores == sorted(scores, reverse=True) and all(0 <= x <= 1 for x in scores)
        assert scores[0] > 0.3  # Welcome is about pricing; the rest share little
        assert meta["coverage"]["embedded"] is True and meta["coverage"]["chunks"] >= 1
        expected = e.related_notes("notes", "Projects/Pricing.md", 5)
        assert [r["path"] for r in related] == [r.path for r in expected]


async def test_documents_is_engram_get(client: TestClient[Any, Any], indexed: Engram) -> None:
    doc = await get_json(client, "/v1/documents", params={"ref": "notes/Projects/Pricing.md"})
    assert doc["document"] == encode(indexed.get("notes/Projects/Pricing.md"))
    part = await get_json(client, "/v1/documents", params={"ref": "Welcome.md:7", "lines": "2"})
    assert part["document"]["fromLine"] == 7 and part["document"]["text"].count("\n") == 1
    resp = await client.get("/v1/documents", params={"ref": "Nope.md"}, headers=AUTH)
    assert resp.status == 404
    assert (await resp.json())["error"]["code"] == "not_found"


async def test_token_rotation_switches_at_once(client: TestClient[Any, Any]) -> None:
    published: list[str] = []
    client.app[RUNTIME].on_rotate.append(published.append)
    resp = await client.post("/v1/token/rotate", headers=AUTH)
    assert resp.status == 200
    assert (await client.get("/v1/status", headers=AUTH)).status == 401
    new = {"Authorization": f"Bearer {published[0]}"}
    assert (await client.get("/v1/status", headers=new)).status == 200
    assert len(published[0]) >= 43


async def test_every_route_is_in_the_openapi_document_and_back(
    client: TestClient[Any, Any],
) -> None:
    from openapi_spec_validator import validate

    spec = await get_json(client, "/v1/openapi.json")
    assert spec == openapi.document()
    validate(spec)
    shipped = Path(openapi.__file__).with_name("openapi.json").read_text(encoding="utf-8")
    assert shipped == openapi.text(), "regenerate: python -m engram.server.openapi > …"
    in_app = {
        (r.method.lower(), r.resource.canonical)
        for r in client.app.router.routes()
        if r.method != "HEAD" and r.resource is not None
    }
    in_spec = {
        (method, path)
        for path, item in spec["paths"].items()
        for method in item
        if method in {"get", "post", "patch", "delete", "put"}
    }
    assert in_app == in_spec


async def test_engram_is_not_touched_on_the_event_loop(client: TestClient[Any, Any]) -> None:
    """Searches run on reader threads: their SQLite connections are not the loop thread's."""
    import threading

    engram = client.app[ENGRAM]
    seen: list[str] = []
    original = engram.search

    def spy(*a: Any, **k: Any) -> Any:
        seen.append(threading.current_thread().name)
        return original(*a, **k)

    engram.search = spy  # type: ignore[method-assign]
    await post(client, "/v1/search", {"q": "pricing"})
    assert seen and seen[0].startswith("engram-read")
