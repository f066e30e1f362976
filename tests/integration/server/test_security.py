"""The daemon's defences: token, Host, Origin, size caps, JSON errors, paths kept in the vault."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from server_helpers import AUTH, TOKEN

from engram.server.app import create_app
from engram.server.state import ENGRAM


def api_routes(app: web.Application) -> list[tuple[str, str]]:
    """(method, concrete path) for every route of the app."""
    out = []
    for route in app.router.routes():
        if route.method == "HEAD":
            continue
        path = route.resource.canonical if route.resource else ""
        out.append((route.method, path.replace("{id}", "abc")))
    return out


async def test_every_route_but_health_refuses_a_missing_or_wrong_token(
    client: TestClient[Any, Any],
) -> None:
    routes = api_routes(client.app)
    assert len(routes) >= 18
    for method, path in routes:
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": TOKEN}):
            resp = await client.request(method, path, headers=headers, json={"q": "x"})
            if (method, path) == ("GET", "/v1/health"):
                assert resp.status == 200
                continue
            assert resp.status == 401, (method, path, headers)
            body = await resp.json()
            assert body["error"]["code"] == "unauthorized"
            assert TOKEN not in await resp.text()
            assert resp.headers["WWW-Authenticate"].startswith("Bearer")


async def test_unknown_routes_need_the_token_too(client: TestClient[Any, Any]) -> None:
    resp = await client.get("/v1/nothing-here")
    assert resp.status == 401
    resp = await client.get("/v1/nothing-here", headers=AUTH)
    assert resp.status == 404
    assert (await resp.json())["error"]["code"] == "not_found"
    resp = await client.delete("/v1/status", headers=AUTH)
    assert resp.status == 405
    assert (await resp.json())["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1",
        "127.0.0.1:1",
        "localhost",
        "[::1]:{port}",
    ],
)
async def test_a_spoofed_host_is_refused(client: TestClient[Any, Any], host: str) -> None:
    port = client.server.port
    for path in ("/v1/health", "/v1/status"):
        resp = await client.get(path, headers={**AUTH, "Host": host.format(port=port)})
        assert resp.status == 403
        assert (await resp.json())["error"]["code"] == "forbidden_host"


async def test_loopback_hosts_are_accepted(client: TestClient[Any, Any]) -> None:
    port = client.server.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        resp = await client.get("/v1/status", headers={**AUTH, "Host": host})
        assert resp.status == 200


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", "http://127.0.0.1:1234", "app://obsidian.md.evil"]
)
async def test_a_foreign_origin_is_refused(client: TestClient[Any, Any], origin: str) -> None:
    for path in ("/v1/health", "/v1/status"):
        resp = await client.get(path, headers={**AUTH, "Origin": origin})
        assert resp.status == 403
        assert (await resp.json())["error"]["code"] == "forbidden_origin"
        assert "Access-Control-Allow-Origin" not in resp.headers
    resp = await client.options("/v1/query", headers={"Origin": origin})
    assert resp.status == 403


async def test_obsidian_origin_gets_cors(client: TestClient[Any, Any]) -> None:
    origin = {"Origin": "app://obsidian.md"}
    pre = await client.options(
        "/v1/query", headers={**origin, "Access-Control-Request-Method": "POST"}
    )
    assert pre.status == 204
    assert "Authorization" in pre.headers["Access-Control-Allow-Headers"]
    resp = await client.post("/v1/query", json={"q": "pricing"}, headers={**AUTH, **origin})
    assert resp.status == 200
    assert resp.headers["Access-Control-Allow-Origin"] == "app://obsidian.md"
    resp = await client.post("/v1/query", json={"q": "pricing"}, headers=origin)
    assert resp.status == 401  # CORS is no substitute for the token
    assert resp.headers["Access-Control-Allow-Origin"] == "app://obsidian.md"


async def test_an_oversized_body_is_413(client: TestClient[Any, Any]) -> None:
    big = b'{"q": "' + b"a" * (1024 * 1024 + 10) + b'"}'
    resp = await client.post("/v1/query", data=big, headers=AUTH)
    assert resp.status == 413
    assert (await resp.json())["error"]["code"] == "payload_too_large"

    async def chunks() -> Any:  # no Content-Length: the cap applies while reading
        for _ in range(20):
            yield b"a" * 65536

    resp = await client.post("/v1/facts", data=chunks(), headers=AUTH)
    assert resp.status == 413
    assert (await resp.json())["error"]["code"] == "payload_too_large"


async def test_a_long_query_string_is_414(client: TestClient[Any, Any]) -> None:
    resp = await client.get("/v1/notes/metadata", params={"path": "a" * 5000}, headers=AUTH)
    assert resp.status == 414
    resp = await client.post("/v1/query", json={"q": "word " * 500}, headers=AUTH)
    assert resp.status == 400
    assert "too long" in (await resp.json())["error"]["message"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/query"),
        ("POST", "/v1/recall"),
        ("POST", "/v1/facts"),
        ("PATCH", "/v1/facts/abc"),
        ("POST", "/v1/facts/from-note"),
        ("POST", "/v1/active-note"),
        ("POST", "/v1/index"),
    ],
)
@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b'"text"', b"\xff\xfe"])
async def test_malformed_json_is_400(
    client: TestClient[Any, Any], method: str, path: str, body: bytes
) -> None:
    resp = await client.request(method, path, data=body, headers=AUTH)
    assert resp.status == 400
    assert (await resp.json())["error"]["code"] == "invalid_json"


TRAVERSALS = ["../outside.md", "../../etc/passwd", "/etc/passwd", "a/../../x.md", "a\x00b.md", ""]


@pytest.mark.parametrize("bad", TRAVERSALS)
async def test_path_traversal_is_refused_everywhere(client: TestClient[Any, Any], bad: str) -> None:
    calls = [
        ("GET", "/v1/notes/metadata", {"params": {"path": bad}}),
        ("GET", "/v1/graph/neighbors", {"params": {"path": bad}}),
        ("POST", "/v1/index", {"json": {"paths": [bad]}}),
        ("POST", "/v1/index", {"json": {"deleted": [bad]}}),
        ("POST", "/v1/index", {"json": {"renamed": [{"from": "Welcome.md", "to": bad}]}}),
        ("POST", "/v1/active-note", {"json": {"path": bad, "selection": "", "cursorLine": 1}}),
        ("POST", "/v1/facts/from-note", {"json": {"path": bad}}),
    ]
    for method, path, kwargs in calls:
        resp = await client.request(method, path, headers=AUTH, **kwargs)
        assert resp.status == 400, (path, bad, await resp.text())
        assert (await resp.json())["error"]["code"] in {"invalid_input", "invalid_json"}


async def test_a_home_folder_of_nobody_is_a_clear_error(client: TestClient[Any, Any]) -> None:
    """`~user/...` of a user this machine lacks made Path.expanduser raise (a 500 found by
    fuzz_server.py); it is a name like any other: refused, or not found."""
    bad = "~nobody-on-this-machine/x.md"
    for method, path, kwargs in [
        ("GET", "/v1/notes/metadata", {"params": {"path": bad}}),
        ("GET", "/v1/graph/neighbors", {"params": {"path": bad}}),
        ("POST", "/v1/facts/from-note", {"json": {"path": bad}}),
    ]:
        resp = await client.request(method, path, headers=AUTH, **kwargs)
        assert resp.status in (400, 404), (path, await resp.text())


async def test_a_symlink_out_of_the_vault_is_refused(
    client: TestClient[Any, Any], tiny_vault: Any, tmp_path: Any
) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "s.md").write_text("secret")
    (tiny_vault / "link").symlink_to(outside)
    resp = await client.get("/v1/notes/metadata", params={"path": "link/s.md"}, headers=AUTH)
    assert resp.status == 400


async def test_an_unexpected_failure_is_a_json_500_without_details(
    client: TestClient[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    engram = client.app[ENGRAM]

    def boom(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError(f"secret detail {TOKEN}")

    monkeypatch.setattr(engram, "search", boom)
    resp = await client.post("/v1/search", json={"q": "pricing"}, headers=AUTH)
    assert resp.status == 500
    text = await resp.text()
    assert (await resp.json())["error"]["code"] == "internal"
    assert "Traceback" not in text and "secret" not in text and TOKEN not in text
    status = await (await client.get("/v1/status", headers=AUTH)).json()
    assert status["lastError"]["message"] == "RuntimeError in /v1/search"


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("POST", "/v1/query", {"data": b'{"q": "a\\u0000b"}'}),
        ("POST", "/v1/query", {"data": b'{"q": "\\ud800"}'}),
        ("POST", "/v1/query", {"data": b'{"q": "x", "n": "ten"}'}),
        ("POST", "/v1/search", {"data": b'{"q": "x", "n": 2.5}'}),
        ("POST", "/v1/query", {"data": b'{"q": "x", "filters": {"tags": ["\\ud800"]}}'}),
        ("GET", "/v1/documents", {"params": {"ref": "a\x00b"}}),
        ("GET", "/v1/notes/metadata", {"params": {"path": "x" * 300 + ".md"}}),
        ("POST", "/v1/index", {"data": b'{"paths": ["\\udc00.md"]}'}),
        ("POST", "/v1/index", {"data": b'{"renamed": null}'}),
        ("POST", "/v1/active-note", {"data": b'{"path": "Welcome.md", "cursorLine": null}'}),
    ],
)
async def test_hostile_text_is_refused_not_crashed(
    client: TestClient[Any, Any], method: str, path: str, kwargs: dict[str, Any]
) -> None:
    resp = await client.request(method, path, headers=AUTH, **kwargs)
    assert resp.status == 400, await resp.text()
    assert (await resp.json())["error"]["code"] == "invalid_input"


def nested(depth: int) -> bytes:
    """A body whose deepest container is at `depth` (the body object is level 1)."""
    return b'{"q": "x", "filters": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


# (method, path, body, status, code): JSON that Python's json module takes but the API must not
HOSTILE_JSON = [
    ("POST", "/v1/query", b'{"q": "x", "minScore": NaN}', 400, "invalid_json"),
    ("POST", "/v1/query", b'{"q": "x", "minScore": -Infinity}', 400, "invalid_json"),
    ("POST", "/v1/query", b'{"q": "x", "minScore": 1e999}', 400, "invalid_json"),
    ("POST", "/v1/query", b'{"q": "x", "n": ' + b"9" * 5000 + b"}", 400, "invalid_json"),
    ("POST", "/v1/query", b'{"q": "x", "n": ' + b"9" * 4000 + b"}", 400, "invalid_input"),
    ("POST", "/v1/query", nested(33), 400, "invalid_json"),
    ("POST", "/v1/query", b'{"q": "x", "explain": {}}', 400, "invalid_input"),  # any mode
    ("POST", "/v1/query", b'{"\\udc80": 1, "q": "x"}', 400, "invalid_input"),
    ("POST", "/v1/notes", b'{"title": "t", "frontmatter": {"a": {"b": ["\\ud800"]}}}', 400,
     "invalid_input"),
    ("POST", "/v1/notes", b'{"title": "t", "frontmatter": {"a": [{"\\u0000": 1}]}}', 400,
     "invalid_input"),
    ("POST", "/v1/index", b" \t\n", 400, "invalid_json"),  # not empty: whitespace
    ("POST", "/v1/active-note", b'{"path": null, "cursorLine": -1}', 400, "invalid_input"),
    ("POST", "/v1/notes", b'{"path": "", "title": "t", "dryRun": true}', 400, "invalid_input"),
    ("POST", "/v1/query", b'{"q": "x", "filters": {"tags": null}}', 400, "invalid_input"),
]  # fmt: skip


async def test_hostile_json_is_a_clear_400(client: TestClient[Any, Any]) -> None:
    for method, path, body, status, code in HOSTILE_JSON:
        resp = await client.request(method, path, data=body, headers=AUTH)
        assert resp.status == status, (path, body[:60], await resp.text())
        assert (await resp.json())["error"]["code"] == code, (path, body[:60])
    resp = await client.post("/v1/query", data=nested(32), headers=AUTH)
    assert "nested too deeply" not in await resp.text()  # the limit itself is allowed
    resp = await client.post("/v1/query", data=nested(33), headers=AUTH)
    assert "limit 32 levels" in (await resp.json())["error"]["message"]
    for query in ("?%00=1&limit=1", "?type=a%00b"):
        resp = await client.get("/v1/facts" + query, headers=AUTH)
        assert resp.status == 400, query
    status = await (await client.get("/v1/status", headers=AUTH)).json()
    assert status["lastError"] is None


async def test_a_body_that_stops_arriving_is_408(
    aiohttp_client: Any, indexed: Any, config: Any, runtime: Any
) -> None:
    app = create_app(indexed, dataclasses.replace(config, body_seconds=0.3), runtime)
    client = await aiohttp_client(app)
    port = client.server.port
    head = (
        f"POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Length: 100\r\nConnection: close\r\n\r\n"
    )
    loop = asyncio.get_running_loop()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode() + b'{"q": "pric')  # and nothing more
        sock.setblocking(False)
        answer = await asyncio.wait_for(loop.sock_recv(sock, 65536), 10)
    assert answer.startswith(b"HTTP/1.1 408")
    assert b'"request_timeout"' in answer
    status = await (await client.get("/v1/status", headers=AUTH)).json()
    assert status["lastError"] is None
