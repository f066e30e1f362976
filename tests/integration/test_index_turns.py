"""A write that runs while an index run looks away (index/turns.py) is never undone by it: the
update starts again from what the write left, the passages and vectors it computed meanwhile
are stored only where they still apply, and the index ends equal to a new one of the files."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engram import config
from engram.index import turns, verify
from engram.models.fake import FakeEmbedder
from engram.service import Engram
from engram.store import vectors


@contextmanager
def facade(tmp: Path, index: str = "index") -> Iterator[Engram]:
    env = {k: str(tmp / k.lower()) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    with Engram(config.resolve(env, index=index), embedder=FakeEmbedder(dim=8)) as e:
        yield e


def vault(tmp: Path) -> Path:
    root = tmp / "vault"
    root.mkdir()
    for i in range(6):
        (root / f"Note {i}.md").write_text(f"# Note {i}\n\nAbout [[Note {(i + 1) % 6}]].\n")
    return root


def away_with_a_write(name: str, write: Callable[[], None]) -> tuple[turns.Hook, list[str]]:
    """A hook that runs `write` on another thread (as the daemon's write thread would) the
    first time the index run looks away to run a function called `name`."""
    seen: list[str] = []

    def hook(fn: Callable[[], Any]) -> tuple[Any, bool]:
        result = fn()
        called = getattr(fn, "func", fn).__name__
        if called != name or seen:
            return result, False
        seen.append(called)
        writer = threading.Thread(target=write)
        writer.start()
        writer.join()
        return result, True

    return hook, seen


def drift(e: Engram, tmp: Path, root: Path) -> list[str]:
    with facade(tmp, "fresh") as fresh:
        fresh.init_vault(str(root), "v", index=False, template=False)
        fresh.update()
        fresh.embed()
        mine, theirs = verify.snapshot(e.db.conn, "v"), verify.snapshot(fresh.db.conn, "v")
        return [d.describe() for d in verify.compare(mine, theirs)]


def test_an_update_a_write_interrupts_starts_again_and_keeps_the_write(tmp_path: Path) -> None:
    root = vault(tmp_path)
    with facade(tmp_path) as e:
        e.init_vault(str(root), "v", template=False)
        e.embed()
        for i in range(6):  # changed on disk: the next update parses them all
            (root / f"Note {i}.md").write_text(f"# Note {i}\n\nNow about [[Note {i}]] only.\n")

        def person_saves() -> None:  # a write the daemon indexes itself, fresher than the scan
            (root / "Note 2.md").write_text("# Note 2\n\nThe person's last word.\n")
            e.update_changed("v", ["Note 2.md"])

        hook, seen = away_with_a_write("_take", person_saves)
        with turns.giving_way(hook):
            with pytest.raises(turns.Replan):
                e.update()
            assert seen == ["_take"]
            e.update()  # the job again: what it parsed before is kept for it
            e.embed()
        body = e.db.conn.execute(
            "SELECT c.text FROM documents d JOIN content c ON c.hash = d.hash"
            " WHERE d.path = 'Note 2.md'"
        ).fetchone()[0]
        assert "The person's last word." in body
        assert drift(e, tmp_path, root) == []


def test_passages_a_write_embedded_meanwhile_are_not_stored_twice(tmp_path: Path) -> None:
    root = vault(tmp_path)
    with facade(tmp_path) as e:
        e.init_vault(str(root), "v", template=False)
        hook, seen = away_with_a_write("_vectors", lambda: e.embed())
        with turns.giving_way(hook):
            e.embed()
        assert seen == ["_vectors"]
        conn = e.db.conn
        stored = conn.execute(f"SELECT count(*) FROM {vectors.VECTOR_TABLE}").fetchone()[0]
        assert stored == conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        assert vectors.coverage(conn)["queued"] == 0
        assert drift(e, tmp_path, root) == []
