"""Writes are answered while the daemon indexes and embeds: the job's CPU work runs away from
the writers' turn and its short stores yield to them, the write runs (its own notes indexed and
embedded), and the job carries on to the same end."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from server_helpers import AUTH, TOKEN

from engram import config
from engram.index import verify
from engram.models.fake import FakeEmbedder
from engram.models.protocols import Vector
from engram.server.app import create_app
from engram.server.state import Runtime, ServerConfig
from engram.service import Engram
from engram.store import vectors

BATCH_SECONDS = 0.15
CUT_SECONDS = 0.005  # per passage-sized piece of the huge note: ~6 s to cut it all
MARK = "zebra"  # a word only the huge note holds


class SlowEmbedder(FakeEmbedder):
    """The fake embedder at a fixed cost per batch, like a real model on a busy machine."""

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        time.sleep(BATCH_SECONDS)
        return super().embed_documents(texts)


class SlowCutting(FakeEmbedder):
    """The fake embedder, slow to count the tokens of the huge note's pieces (cutting a huge
    note into passages is seconds of work); `cutting` is set once that has begun."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim=dim)
        self.cutting = threading.Event()

    def count_tokens(self, text: str) -> int:
        if MARK in text:
            self.cutting.set()
            time.sleep(CUT_SECONDS)
        return super().count_tokens(text)


def huge_note(parts: int) -> str:
    """A note of many sections, each a passage of its own."""
    out = ["# Huge\n"]
    for i in range(parts):
        words = " ".join(f"w{(i * 13 + k) % 1009}" for k in range(60))
        out.append(f"\n## Part {i}\n\n{words} {MARK} {i}.\n")
    return "".join(out)


def write_notes(folder: Path, count: int) -> None:
    """Notes whose passages all differ, so each needs a vector of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        words = " ".join(f"w{(i * 7 + k) % 997}" for k in range(40))
        (folder / f"study {i}.md").write_text(f"# Study {i}\n\n{words} number {i}.\n")


@contextlib.asynccontextmanager
async def served(aiohttp_client: Any, vault: Path, embedder: Any) -> AsyncIterator[Any]:
    """The vault served by the app over a facade with `embedder`; the app is closed before
    the index (a job a write queued may still run until then)."""
    cfg = ServerConfig(vault=vault.resolve(), collection="vault", watch=False)
    with Engram(config.resolve(os.environ), embedder=embedder) as e:
        e.init_vault(str(vault), name="vault")
        client = await aiohttp_client(create_app(e, cfg, Runtime(TOKEN)))
        try:
            yield e, client
        finally:
            await client.close()


async def status(client: Any) -> dict[str, Any]:
    resp = await client.get("/v1/status", headers=AUTH)
    result: dict[str, Any] = await resp.json()
    return result


async def wait_for(client: Any, test: Any, seconds: float = 120) -> dict[str, Any]:
    """Poll status until `test(status)` holds (never a single sample: CI machines are busy)."""
    deadline = time.monotonic() + seconds
    while True:
        st = await status(client)
        if test(st):
            return st
        assert time.monotonic() < deadline, st
        await asyncio.sleep(0.02)


async def test_a_fact_is_stored_and_embedded_while_the_start_up_job_embeds(
    aiohttp_client: Any, xdg: dict[str, str], tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    write_notes(vault, 80)  # 20 batches of 4 passages: about 3 s of embedding
    async with served(aiohttp_client, vault, SlowEmbedder(dim=32)) as (e, client):
        await wait_for(client, lambda st: 0 < st["embedded"] < st["chunks"])

        started = time.monotonic()
        resp = await client.post(
            "/v1/facts", json={"text": "Quarterly pricing review moves to Thursdays."}, headers=AUTH
        )
        took = time.monotonic() - started
        assert resp.status == 201, await resp.text()
        fact = (await resp.json())["fact"]
        during = await status(client)
        assert during["indexing"]["state"] == "indexing", "the write waited for the whole job"
        assert took < 10 * BATCH_SECONDS + 5  # one batch, the write, and a busy machine's slack

        # the fact was indexed and embedded by its own write, before the job finished
        hits = await client.post(
            "/v1/vsearch", json={"q": "kind:memory quarterly pricing review"}, headers=AUTH
        )
        assert (await hits.json())["results"][0]["path"] == fact["path"]

        # the job resumed and ended where a job without the write would have
        done = await wait_for(client, lambda st: st["indexing"]["state"] == "idle")
        assert done["indexing"]["lastJob"]["state"] == "done"
        coverage = vectors.coverage(e.db.conn)
        assert coverage["documentsNotEmbedded"] == 0 and coverage["queued"] == 0
        assert coverage["embedded"] == coverage["chunks"]


async def test_writes_in_a_stream_never_starve_the_job(
    aiohttp_client: Any, xdg: dict[str, str], tmp_path: Path
) -> None:
    """Each time it starts again the job commits a batch before it yields: the start-up job
    finishes under writes sent back to back, and what the writes left is embedded after."""
    vault = tmp_path / "vault"
    write_notes(vault, 160)
    async with served(aiohttp_client, vault, SlowEmbedder(dim=32)) as (e, client):
        first = (await wait_for(client, lambda st: st["embedded"] > 0))["indexing"]["job"]["id"]
        stored = 0
        deadline = time.monotonic() + 120
        while True:
            last = (await status(client))["indexing"]["lastJob"]
            if last is not None and last["id"] == first:
                break
            assert time.monotonic() < deadline, "the job never finished under a stream of writes"
            resp = await client.post(
                "/v1/facts", json={"text": f"Observation number {stored}."}, headers=AUTH
            )
            assert resp.status == 201
            stored += 1
        assert last["state"] == "done" and stored >= 2
        await wait_for(client, lambda st: st["indexing"]["state"] == "idle")
        coverage = vectors.coverage(e.db.conn)
        assert coverage["documentsNotEmbedded"] == 0 and coverage["queued"] == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
async def test_writes_run_at_the_daemons_priority_not_the_jobs(
    aiohttp_client: Any, xdg: dict[str, str], tmp_path: Path
) -> None:
    """A person waits for a write: under load a nice-19 write would wait for every other
    program (the index job keeps nice 19)."""
    vault = tmp_path / "vault"
    write_notes(vault, 3)
    async with served(aiohttp_client, vault, FakeEmbedder(dim=32)) as (e, client):
        seen: list[int] = []
        original = e.fact_add

        def spy(*a: Any, **k: Any) -> Any:
            seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
            return original(*a, **k)

        e.fact_add = spy  # type: ignore[method-assign]
        resp = await client.post("/v1/facts", json={"text": "A fact."}, headers=AUTH)
        assert resp.status == 201
        assert seen == [os.getpriority(os.PRIO_PROCESS, 0)]


async def test_a_write_is_answered_while_the_job_cuts_a_huge_note(
    aiohttp_client: Any, xdg: dict[str, str], tmp_path: Path
) -> None:
    """A write that comes while the job cuts a huge note into passages (one unit of CPU work,
    seconds long) is answered before that note is cut; the index then ends current: what a
    new index of the same files holds, every passage embedded."""
    vault = tmp_path / "vault"
    write_notes(vault, 5)
    (vault / "Huge.md").write_text(huge_note(300), encoding="utf-8")
    embedder = SlowCutting(dim=32)
    async with served(aiohttp_client, vault, embedder) as (e, client):
        deadline = time.monotonic() + 120
        while not embedder.cutting.is_set():
            assert time.monotonic() < deadline, "the job never began cutting the huge note"
            await asyncio.sleep(0.01)
        huge = e.db.conn.execute("SELECT hash FROM documents WHERE path = 'Huge.md'").fetchone()[0]

        started = time.monotonic()
        resp = await client.post(
            "/v1/facts", json={"text": "The zoo moves the zebras on Friday."}, headers=AUTH
        )
        took = time.monotonic() - started
        assert resp.status == 201, await resp.text()
        assert not vectors.is_chunked(e.db.conn, huge), f"the write waited {took:.1f} s for it"

        await wait_for(client, lambda st: st["indexing"]["state"] == "idle")
        coverage = vectors.coverage(e.db.conn)
        assert coverage["documentsNotEmbedded"] == 0 and coverage["queued"] == 0
        fresh_config = config.resolve(os.environ, index="fresh")
        with Engram(fresh_config, embedder=FakeEmbedder(dim=32)) as fresh:
            fresh.init_vault(str(vault), name="vault", template=False)
            fresh.embed()
            mine = verify.snapshot(e.db.conn, "vault")
            drift = verify.compare(mine, verify.snapshot(fresh.db.conn, "vault"))
        assert [d.describe() for d in drift] == []
