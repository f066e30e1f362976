"""Every write leaves the index current when it returns, with no daemon to catch up later.

Hypothesis runs random sequences of the writes the CLI makes (fact add/update/supersede/
archive, note create/edit/move/delete/link), each in a new facade as each `engram` command is
a new process. After the sequence, without any `engram embed` or `update`, the index must
equal one built from scratch of the same files and then embedded: keyword tables, passages,
which passages have a vector, and the vectors themselves. `engram rebuild` then finds no
passage without a vector. A last test makes the same checks through the command line.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import config
from engram.errors import EngramError
from engram.index import verify
from engram.models.fake import FakeEmbedder
from engram.service import Engram
from tests.conftest import EngramCli, TinyModels

PROFILE = settings(
    max_examples=int(os.environ.get("ENGRAM_WRITES_EXAMPLES", "0")) or 25,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NOTES = ("Home.md", "Plans/Sync.md", "Plans/Trip.md", "Areas/Coffee beans.md")
WORDS = ("sync the vault", "laptop and phone", "espresso grind", "a trip to Lisbon", "budget")
FACTS = (
    "We decided to sync the vault with Syncthing",
    "The grinder setting for espresso is 12",
    "Budget for the trip is 900 euros",
)


def _text(data: st.DataObject) -> str:
    return " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)))


def _note(data: st.DataObject) -> str:
    return data.draw(st.sampled_from(NOTES))[:-3]


def _write(e: Engram, data: st.DataObject, facts: list[str]) -> None:
    """One write, as one command makes it; a refused one (no such note, exists) writes nothing."""
    kind = data.draw(
        st.sampled_from(
            ("fact", "fact", "fact_update", "supersede", "archive", "create", "create", "edit",
             "edit", "move", "delete", "link")
        )
    )  # fmt: skip
    try:
        if kind == "fact" or (kind in ("fact_update", "supersede", "archive") and not facts):
            facts.append(e.fact_add(data.draw(st.sampled_from(FACTS)) + " " + _text(data)).id)
        elif kind == "fact_update":
            e.fact_update(data.draw(st.sampled_from(facts)), text=_text(data))
        elif kind == "supersede":
            old = data.draw(st.sampled_from(facts))
            facts.append(e.fact_supersede(old, _text(data)).new.id)
        elif kind == "archive":
            e.fact_archive(data.draw(st.sampled_from(facts)))
        elif kind == "create":
            e.note_create(data.draw(st.sampled_from(NOTES)), body=_text(data) + "\n")
        elif kind == "edit":
            e.note_edit(_note(data), append=_text(data))
        elif kind == "move":
            e.note_move(_note(data), data.draw(st.sampled_from(NOTES)))
        elif kind == "delete":
            e.note_delete(_note(data))
        else:
            e.note_link(_note(data), _note(data))
    except EngramError:
        pass


@contextmanager
def _facade(tmp: Path, index: str = "index") -> Iterator[Engram]:
    env = {k: str(tmp / k.lower()) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    e = Engram(config.resolve(env, index=index), embedder=FakeEmbedder(dim=8))
    try:
        yield e
    finally:
        e.close()


def _vectors(conn: sqlite3.Connection) -> dict[str, bytes]:
    """Each passage text's vector, by text hash."""
    rows = conn.execute(
        "SELECT e.text_hash, v.embedding FROM embeddings e JOIN vectors v ON v.rowid = e.vector_id"
    )
    return {h: bytes(blob) for h, blob in rows}


def _drift(e: Engram, tmp: Path, root: Path) -> list[str]:
    """How the written index differs from a new one of the same files, embedded."""
    with _facade(tmp, "fresh") as fresh:
        fresh.init_vault(str(root), "v", index=False, template=False)
        fresh.update()
        fresh.embed()
        mine, theirs = verify.snapshot(e.db.conn, "v"), verify.snapshot(fresh.db.conn, "v")
        out = [d.describe() for d in verify.compare(mine, theirs)]
        used = {row[7] for row in mine.chunks if row[7] is not None}
        vectors, fresh_vectors = _vectors(e.db.conn), _vectors(fresh.db.conn)
        differ = sorted(h for h in used if vectors.get(h) != fresh_vectors.get(h))
        if differ:
            out.append(f"vectors differ for {len(differ)} passages")
    return out


@PROFILE
@given(data=st.data())
def test_after_any_writes_the_index_equals_a_rebuild(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory(prefix="engram-writes-") as name:
        tmp = Path(name)
        root = tmp / "vault"
        (root / "Plans").mkdir(parents=True)
        (root / "Home.md").write_text("# Home\n\nWhere the [[Sync]] plans live.\n", "utf-8")
        (root / "Plans" / "Sync.md").write_text("# Sync\n\nPhone and laptop.\n", "utf-8")
        with _facade(tmp) as e:
            e.init_vault(str(root), "v", template=False)
            e.embed()  # an embedded index: writes keep it so
        facts: list[str] = []
        for _ in range(data.draw(st.integers(1, 6), label="commands")):
            with _facade(tmp) as e:  # one command, one process
                _write(e, data, facts)
        with _facade(tmp) as e:
            drift = _drift(e, tmp, root)
            assert not drift, "\n".join(drift)
            assert e.rebuild().to_embed == 0


def test_cli_fact_is_recalled_by_meaning_and_rebuild_finds_nothing_stale(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path, tiny: TinyModels
) -> None:
    """`engram fact add`, note writes and a move with no daemon; then `recall` by meaning and
    `rebuild` with nothing left to embed, and a vector search that finds the fact's note."""
    env = {**xdg, "ENGRAM_EMBED_MODEL": str(tiny.embed)}
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Home.md").write_text("# Home\n\nThe start page.\n", "utf-8")
    run(env, "init", str(root), "--name", "v")
    run(env, "embed")
    fact = json.loads(
        run(env, "fact", "add", "Learning keyboard shortcuts daily is my habit", "--json").stdout
    )
    run(env, "note", "create", "Plans/Sync.md", "--body", "Sync the vault with Syncthing.")
    run(env, "note", "edit", "Sync", "--append", "Phone and laptop both.")
    run(env, "note", "move", "Plans/Sync.md", "Areas/Sync.md")
    run(env, "note", "link", "Home", "Sync")
    status = json.loads(run(env, "status", "--json").stdout)["embeddings"]
    assert status["queued"] == 0 and status["documentsNotEmbedded"] == 0, status
    found = json.loads(
        run(env, "vsearch", "keyboard shortcuts", "--memory", "-n", "50", "--json").stdout
    )
    assert fact["path"] in {r["path"] for r in found}  # vectors only find what is embedded
    recalled = json.loads(run(env, "recall", "keyboard shortcuts habit", "--json").stdout)
    assert recalled["results"] and recalled["results"][0]["path"] == fact["path"]
    rebuilt = json.loads(run(env, "rebuild", "--yes", "--json").stdout)
    assert rebuilt["toEmbed"] == 0
