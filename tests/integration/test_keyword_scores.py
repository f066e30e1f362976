"""Keyword scores on a small vault: every query word is in half the notes, and still the note
that matches best ranks first with a score that means something."""

from __future__ import annotations

from pathlib import Path

from engram.service import Engram
from tests.conftest import write_tree

FOUR_NOTES = {
    "Coffee pricing.md": "# Coffee pricing\n\nWe decided to charge per bag: usage based pricing\n",
    "Garden.md": "# Garden\n\nTomatoes and basil. The pricing of seeds is low\n",
    "Standup.md": "# Standup\n\nNothing about money here\n",
    "Office.md": "# Office\n\nWe decided to move the office\n",
}


def test_four_note_vault_ranks_the_best_match_first(engram: Engram, tmp_path: Path) -> None:
    engram.collection_add(str(write_tree(tmp_path / "four", FOUR_NOTES)), "four")
    engram.update()
    hits = engram.search("pricing decided")
    assert hits[0].path == "Coffee pricing.md"
    assert {h.path for h in hits} == {"Coffee pricing.md", "Garden.md", "Office.md"}
    scores = [h.score for h in hits]
    assert all(0.2 < s < 1 for s in scores)  # none shown as 0.00
    assert scores[0] - scores[1] > 0.1  # both words, one in the title: clearly ahead
    kept = engram.search("pricing decided", min_score=(scores[0] + scores[1]) / 2)
    assert [h.path for h in kept] == ["Coffee pricing.md"]
