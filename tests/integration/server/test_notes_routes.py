"""The note-writing routes on the tiny vault: shapes, dry runs, preconditions, traversal."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from server_helpers import AUTH

from engram.server.openapi import document as openapi_document
from engram.server.state import ENGRAM
from engram.service import Engram

TRAVERSALS = ["../outside.md", "../../etc/passwd", "/etc/passwd", "a/../../x.md", "a\x00b.md", ""]


async def post(client: TestClient[Any, Any], path: str, body: Any, status: int = 200) -> Any:
    resp = await client.post(path, json=body, headers=AUTH)
    assert resp.status == status, await resp.text()
    return await resp.json()


def every_file(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_create_then_edit_with_the_returned_hash(
    client: TestClient[Any, Any], tiny_vault: Path, indexed: Engram
) -> None:
    made = await post(
        client,
        "/v1/notes",
        {"title": "Roast Log", "folder": "Logs", "body": "Day one.", "frontmatter": {"n": 1}},
        status=201,
    )
    change = made["change"]
    schema = openapi_document()["components"]["schemas"]["NoteChange"]
    assert sorted(change) == sorted(schema["properties"])
    assert change["path"] == "Logs/Roast Log.md" and change["operation"] == "create"
    assert (tiny_vault / "Logs/Roast Log.md").read_text() == "---\nn: 1\n---\nDay one.\n"
    edited = await post(
        client,
        "/v1/notes/edit",
        {"path": "Logs/Roast Log", "append": "Day two.", "expectedHash": change["hash"]},
    )
    assert edited["change"]["files"][0]["diff"].endswith("+Day two.\n")
    assert edited["change"]["hash"] == sha(tiny_vault / "Logs/Roast Log.md")
    assert [r.path for r in indexed.search("day two")] == ["Logs/Roast Log.md"]


async def test_a_stale_hash_is_409_and_nothing_changes(
    client: TestClient[Any, Any], tiny_vault: Path
) -> None:
    before = every_file(tiny_vault)
    for route, body in [
        ("/v1/notes/edit", {"path": "Welcome.md", "append": "x"}),
        ("/v1/notes/move", {"path": "Welcome.md", "to": "W.md"}),
        ("/v1/notes/delete", {"path": "Welcome.md"}),
        ("/v1/notes/link", {"path": "Welcome.md", "target": "Café Notes"}),
    ]:
        resp = await client.post(route, json={**body, "expectedHash": "ab" * 32}, headers=AUTH)
        assert resp.status == 409, route
        assert (await resp.json())["error"]["code"] == "conflict"
    assert every_file(tiny_vault) == before


async def test_dry_runs_answer_with_diffs_and_write_nothing(
    client: TestClient[Any, Any], tiny_vault: Path
) -> None:
    before = every_file(tiny_vault)
    calls = [
        ("/v1/notes", {"path": "New.md", "body": "x"}),
        ("/v1/notes/edit", {"path": "Café Notes.md", "properties": {"rating": 5}}),
        ("/v1/notes/move", {"path": "Projects/Pricing.md", "to": "Archive/"}),
        ("/v1/notes/delete", {"path": "Welcome.md"}),
        ("/v1/notes/link", {"path": "Café Notes.md", "target": "Welcome"}),
    ]
    for route, body in calls:
        data = await post(client, route, {**body, "dryRun": True})
        assert data["change"]["dryRun"] and data["change"]["diff"].startswith("--- "), route
    assert every_file(tiny_vault) == before


async def test_move_rewrites_the_links_and_delete_goes_to_the_trash(
    client: TestClient[Any, Any], tiny_vault: Path, indexed: Engram
) -> None:
    moved = await post(
        client, "/v1/notes/move", {"path": "Projects/Pricing.md", "to": "Archive/Pricing 2024"}
    )
    assert moved["change"]["linksRewritten"] == 4
    welcome = (tiny_vault / "Welcome.md").read_text()
    assert "[[Archive/Pricing 2024|pricing]]" in welcome
    assert "[[Archive/Pricing 2024#Decision]]" in welcome
    assert "[[Archive/Pricing 2024#^tiers]]" in welcome
    assert "[markdown link](Archive/Pricing%202024.md)" in welcome
    gone = await post(client, "/v1/notes/delete", {"path": "Café Notes.md"})
    assert gone["change"]["path"] == ".trash/Café Notes.md"
    assert gone["change"]["brokenLinks"] == ["Welcome.md"]
    assert (tiny_vault / ".trash/Café Notes.md").exists()
    assert not (tiny_vault / "Café Notes.md").exists()


async def test_link_adds_a_related_section_once(
    client: TestClient[Any, Any], tiny_vault: Path
) -> None:
    first = await post(client, "/v1/notes/link", {"path": "Café Notes.md", "target": "Welcome"})
    assert first["change"]["changed"]
    again = await post(client, "/v1/notes/link", {"path": "Café Notes.md", "target": "Welcome"})
    assert not again["change"]["changed"]
    text = (tiny_vault / "Café Notes.md").read_text()
    assert text.endswith("#coffee.\n\n## Related\n- [[Welcome]]\n")


@pytest.mark.parametrize("bad", TRAVERSALS)
async def test_path_traversal_is_refused_by_every_note_route(
    client: TestClient[Any, Any], tiny_vault: Path, tmp_path: Path, bad: str
) -> None:
    before = every_file(tiny_vault)
    calls = [
        ("/v1/notes", {"path": bad}),
        ("/v1/notes", {"title": "T", "folder": bad or "../"}),
        ("/v1/notes/edit", {"path": bad, "append": "x"}),
        ("/v1/notes/move", {"path": bad, "to": "x.md"}),
        ("/v1/notes/move", {"path": "Welcome.md", "to": bad}),
        ("/v1/notes/delete", {"path": bad}),
        ("/v1/notes/link", {"path": bad, "target": "Welcome.md"}),
        ("/v1/notes/link", {"path": "Welcome.md", "target": bad}),
    ]
    for route, body in calls:
        resp = await client.post(route, json=body, headers=AUTH)
        assert resp.status == 400, (route, body, await resp.text())
        assert (await resp.json())["error"]["code"] in {"invalid_input", "invalid_json"}
    assert every_file(tiny_vault) == before
    assert not (tmp_path / "outside.md").exists() and not (tmp_path / "x.md").exists()


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/v1/notes", {"path": "A.md", "content": "x"}),
        ("/v1/notes/edit", {"path": "Welcome.md", "append": 3}),
        ("/v1/notes/edit", {"path": "Welcome.md", "properties": ["x"]}),
        ("/v1/notes/edit", {"path": "Welcome.md", "append": "x", "dryRun": "yes"}),
        ("/v1/notes/edit", {"path": "Welcome.md", "find": "(", "replace": "", "regex": True}),
        ("/v1/notes/move", {"path": "Welcome.md"}),
        ("/v1/notes/move", {"path": "Welcome.md", "to": "Bad#Name"}),
        ("/v1/notes/link", {"path": "Welcome.md", "target": "Café Notes", "display": "a]]b"}),
    ],
)
async def test_bad_input_is_400(client: TestClient[Any, Any], route: str, body: Any) -> None:
    resp = await client.post(route, json=body, headers=AUTH)
    assert resp.status == 400, await resp.text()


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/v1/notes/edit", {"path": "0" * 4000, "append": "x"}),
        ("/v1/notes/delete", {"path": "0" * 300}),
        ("/v1/notes/move", {"path": "Welcome.md", "to": "0" * 4000}),
        ("/v1/notes/move", {"path": "Welcome.md", "to": "a/" * 600 + "b"}),
        ("/v1/notes/link", {"path": "Welcome.md", "target": "0" * 2000}),
        ("/v1/notes", {"path": "0" * 300}),
        ("/v1/notes", {"title": "0" * 300, "folder": "f/" * 700}),
    ],
)
async def test_names_the_file_system_cannot_look_up_are_refused_not_crashed(
    client: TestClient[Any, Any], route: str, body: Any
) -> None:
    """Found by scripts/fuzz_server.py: over-long names were a 500 (ENAMETOOLONG)."""
    resp = await client.post(route, json=body, headers=AUTH)
    assert resp.status in (400, 404), await resp.text()


async def test_unknown_notes_are_404_and_existing_targets_409(
    client: TestClient[Any, Any],
) -> None:
    resp = await client.post("/v1/notes/edit", json={"path": "Nope", "append": "x"}, headers=AUTH)
    assert resp.status == 404
    resp = await client.post("/v1/notes", json={"path": "Welcome.md"}, headers=AUTH)
    assert resp.status == 409
    resp = await client.post(
        "/v1/notes/move", json={"path": "Welcome.md", "to": "Café Notes.md"}, headers=AUTH
    )
    assert resp.status == 409


async def test_writes_run_on_the_write_thread(client: TestClient[Any, Any]) -> None:
    """Off the event loop, on the one thread writes take turns on (not the index job's)."""
    engram = client.app[ENGRAM]
    seen: list[str] = []
    original = engram.note_edit

    def spy(*a: Any, **k: Any) -> Any:
        seen.append(threading.current_thread().name)
        return original(*a, **k)

    engram.note_edit = spy  # type: ignore[method-assign]
    await post(client, "/v1/notes/edit", {"path": "Welcome.md", "append": "x"})
    assert seen and seen[0].rsplit("_", 1)[0] == "engram-write"


async def test_an_edit_that_would_make_a_huge_note_is_refused_before_it_is_built(
    client: TestClient[Any, Any], tiny_vault: Path
) -> None:
    """A 40 KB request used to answer 160 MB (and an MCP call grew to 23.8 GB)."""
    await post(client, "/v1/notes", {"path": "Xs.md", "body": "x" * 4_000}, status=201)
    for regex in (False, True):
        body = {"path": "Xs.md", "find": "x", "replace": "y" * 40_000, "dryRun": True}
        resp = await client.post("/v1/notes/edit", json={**body, "regex": regex}, headers=AUTH)
        assert resp.status == 400, await resp.text()
        error = (await resp.json())["error"]
        assert error["code"] == "invalid_input" and "max_file_bytes" in error["message"]
        assert len(await resp.read()) < 1_000
    assert (tiny_vault / "Xs.md").read_text() == "x" * 4_000 + "\n"


async def test_the_longest_names_a_file_system_allows_can_be_created_edited_moved_deleted(
    client: TestClient[Any, Any], tiny_vault: Path
) -> None:
    """84 x 長 + .md is 255 bytes; the temporary file used to be named after the note."""
    name = "長" * 84 + ".md"
    made = await post(client, "/v1/notes", {"path": name, "body": "one"}, status=201)
    edit = {"path": name, "append": "two", "expectedHash": made["change"]["hash"]}
    await post(client, "/v1/notes/edit", edit)
    await post(client, "/v1/notes/move", {"path": name, "to": "Logs/"})
    assert (tiny_vault / "Logs" / name).read_text() == "one\ntwo\n"
    await post(client, "/v1/notes/delete", {"path": f"Logs/{name}"})
    assert (tiny_vault / ".trash" / "Logs" / name).is_file()
    await post(client, "/v1/notes", {"path": f"Logs/{name}", "body": "again"}, status=201)
    await post(client, "/v1/notes/delete", {"path": f"Logs/{name}"})  # the trash name is taken
    trashed = sorted(p.name for p in (tiny_vault / ".trash" / "Logs").iterdir())
    assert len(trashed) == 2 and all(len(n.encode()) <= 255 for n in trashed)
    too_long = "長" * 85 + ".md"  # 258 bytes
    resp = await client.post("/v1/notes", json={"path": too_long, "body": "x"}, headers=AUTH)
    assert resp.status == 400 and "255 bytes" in (await resp.json())["error"]["message"]
