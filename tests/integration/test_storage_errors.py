"""A full disk and a read-only vault, for real (a tmpfs in a mount namespace of the test's
own, see small_fs.py): one line naming the file and the condition, exit 1, HTTP 507 or 403,
an MCP tool error; and nothing half-written."""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import small_fs
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from engram import config
from engram.service import Engram

pytestmark = pytest.mark.skipif(
    not small_fs.available(), reason="this machine gives no process a mount namespace"
)
ON_A_FULL_VAULT = [
    ("fact", "add", "We decided the disk is full now"),
    ("note", "create", "Ideas.md", "--body", "hello"),
    ("note", "edit", "Plans.md", "--append", "one more line"),
    ("note", "move", "Plans.md", "Archive/Plans.md"),
    ("reflect",),
    ("checkpoint", "--working-on", "the full disk"),
]


@pytest.fixture
def env(xdg: dict[str, str]) -> dict[str, str]:
    return {**xdg, "NO_COLOR": "1", "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


@pytest.fixture
def vault(tmp_path: Path, env: dict[str, str]) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "Plans.md").write_text("# Plans\n\nThe launch is in June.\n", encoding="utf-8")
    (root / "Team.md").write_text("# Team\n\nSee [[Plans]].\n", encoding="utf-8")
    with Engram(config.resolve(os.environ)) as e:
        e.init_vault(str(root))
        e.fact_add("We decided to launch in June.")
    return root


@pytest.fixture
def ns(env: dict[str, str]) -> Iterator[small_fs.Namespace]:
    space = small_fs.Namespace(env)
    yield space
    space.close()


def one_line(done: dict[str, Any]) -> str:
    """The one line a failed command printed (and that it failed with exit 1)."""
    assert done["code"] == 1, done
    lines = done["stderr"].splitlines()
    assert len(lines) == 1, done["stderr"]
    return str(lines[0])


def test_a_full_disk_under_the_vault_is_one_line_per_command_and_changes_nothing(
    vault: Path, ns: small_fs.Namespace
) -> None:
    ns.ask(mount=str(vault))
    ns.ask(fill=str(vault))
    before = ns.ask(tree=str(vault))
    for args in ON_A_FULL_VAULT:
        line = one_line(ns.ask(run=list(args)))
        assert line.startswith(f"error: {vault}/"), (args, line)
        assert line.endswith(": no space left on the device"), (args, line)
    assert ns.ask(tree=str(vault)) == before  # no note, temporary file or journal left


def test_a_full_disk_under_the_index_is_one_line(
    vault: Path, xdg: dict[str, str], ns: small_fs.Namespace
) -> None:
    data = xdg["XDG_DATA_HOME"]
    ns.ask(mount=data)
    ns.ask(fill=data)
    before = ns.ask(tree=str(vault))
    for args in (("fact", "add", "We decided the index is full"), ("update",)):
        line = one_line(ns.ask(run=list(args)))
        assert line.startswith(f"error: the index {data}/engram/index.sqlite: "), line
        assert "no space left on the device" in line
    assert ns.ask(tree=str(vault)) == before


def test_a_read_only_vault_refuses_writes_in_one_line_and_serves_no_daemon(
    vault: Path, ns: small_fs.Namespace
) -> None:
    ns.ask(mount=str(vault))
    ns.ask(readonly=str(vault))
    line = one_line(ns.ask(run=["fact", "add", "We decided the vault is read-only"]))
    assert line.startswith(f"error: {vault}/Engram/decisions/")
    assert line.endswith(": the file system is read-only")
    assert ns.ask(run=["search", "launch"])["code"] == 0  # reading needs no writes
    served = ns.ask(run=["serve", "--vault", str(vault), "--port", "0"])
    assert served["code"] == 1 and "Traceback" not in served["stderr"]  # no half daemon
    last = served["stderr"].splitlines()[-1]  # after the server's own warning, if any
    assert last == f"error: {vault}/.obsidian/plugins: the file system is read-only"


def call(info: dict[str, str], method: str, path: str, body: Any = None) -> tuple[int, Any]:
    req = urllib.request.Request(
        info["url"] + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {info['token']}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_daemon_answers_507_on_a_full_disk_and_403_on_a_read_only_one(
    vault: Path, ns: small_fs.Namespace, tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    ns.ask(mount=str(vault))
    info = ns.ask(serve=str(vault), log=str(log))
    ns.ask(fill=str(vault))
    before = ns.ask(tree=str(vault))
    status, body = call(info, "POST", "/v1/facts", {"text": "We decided the disk is full"})
    assert status == 507 and body["error"]["code"] == "no_space", body
    assert body["error"]["message"].startswith(f"{vault}/Engram/decisions/")
    assert body["error"]["message"].endswith(": no space left on the device")
    ns.ask(readonly=str(vault))
    status, body = call(info, "POST", "/v1/facts", {"text": "We decided it is read-only"})
    assert status == 403 and body["error"]["code"] == "not_writable", body
    assert body["error"]["message"].endswith(": the file system is read-only")
    assert call(info, "GET", "/v1/facts")[0] == 200  # reads are still served
    assert ns.ask(tree=str(vault)) == before
    ns.ask(stop=True)
    assert "Traceback" not in log.read_text() and "no space left" in log.read_text()


async def test_an_mcp_tool_on_a_full_disk_is_a_tool_error_in_one_line(
    vault: Path, env: dict[str, str]
) -> None:
    prelude = ["--mount", str(vault), "--fill", str(vault), "--exec"]
    argv = small_fs.command(*prelude, sys.executable, "-m", "engram", "mcp")
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env={**os.environ, **env, "ENGRAM_AGENT_ID": "agent"}
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, read_timeout_seconds=120) as session,
    ):
        await session.initialize()
        result = await session.call_tool("memory_store_fact", {"text": "We decided it is full"})
        text = "".join(c.text for c in result.content if c.type == "text")
    assert result.is_error and "\n" not in text, text
    assert text.startswith(f"no_space: {vault}/Engram/decisions/")
    assert text.endswith(": no space left on the device")
