"""A large update leaves the full-text index in one segment, and merging changes no answer."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from engram.index import indexer
from engram.service import Engram
from engram.store import admin

WORDS = ("alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta")


def segments(conn: Any) -> int:
    """How many segments FTS5 reads a word from (one lookup of the word in each)."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    conn.execute("SELECT count(*) FROM documents_fts WHERE documents_fts MATCH 'alpha'").fetchone()
    conn.set_trace_callback(None)
    return sum(1 for s in statements if "documents_fts_idx" in s)


def write_notes(vault: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    vault.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
        (vault / f"n{i}.md").write_text(f"# Note {i}\n\nalpha {words}\n", encoding="utf-8")


def answers(engram: Engram) -> list[list[tuple[str, float, str]]]:
    return [
        [(r.path, r.score, r.snippet) for r in engram.search(q, n=None)]
        for q in ("alpha", "beta gamma", "om*", '"delta omega"', "kappa -sigma")
    ]


def test_merging_segments_keeps_every_answer(engram: Engram, tmp_path: Path) -> None:
    write_notes(tmp_path / "v", 60, seed=1)
    engram.collection_add(str(tmp_path / "v"), "v")
    engram.update()
    db = engram.db
    for i in range(8):  # one segment per transaction
        (tmp_path / "v" / f"n{i}.md").write_text(f"alpha edit {i} {WORDS[i]}\n", encoding="utf-8")
        engram.update()
    assert segments(db.conn) > 1
    before = answers(engram)
    admin.merge_fts_segments(db)
    assert segments(db.conn) == 1
    assert answers(engram) == before


@pytest.mark.parametrize(("notes", "merged"), [(30, True), (12, False)])
def test_an_update_that_rebuilt_the_index_merges_it(
    engram: Engram, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notes: int, merged: bool
) -> None:
    """Past MERGE_AFTER notes stored (and half the index), the update ends with one segment;
    below, it leaves the segments as FTS5 keeps them."""
    monkeypatch.setattr(indexer, "MERGE_AFTER", 20)
    monkeypatch.setattr(indexer, "BATCH_MAX", 3)  # a commit, hence a segment, every 3 notes
    write_notes(tmp_path / "v", notes, seed=2)
    engram.collection_add(str(tmp_path / "v"), "v")
    engram.update()
    assert (segments(engram.db.conn) == 1) is merged
