"""`graph rank --about`: the notes about a topic, central among them, not the vault's hubs.

tests/fixtures/vaults/hub is a small settings-and-sync vault shaped like Obsidian's help: every
note links to Settings, which mentions Sync in passing; the Sync notes link to each other.
"""

from __future__ import annotations

import os
from pathlib import Path

from engram import config
from engram.codec import encode
from engram.service import Engram

HUB = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "hub"


def test_influence_about_a_topic_puts_the_topics_notes_first(xdg: dict[str, str]) -> None:
    e = Engram(config.resolve(os.environ))
    e.collection_add(str(HUB), "hub")
    e.update()
    assert e.rank(n=1).notes[0].path == "Interface/Settings.md"  # the vault's hub
    about = e.rank(about="sync", n=5)
    paths = [n.path for n in about.notes]
    assert paths[0] == "Sync/Introduction to Sync.md"
    assert sum(p.startswith("Sync/") for p in paths) == 4  # all of them
    assert "Interface/Hotkeys.md" not in paths  # central to the vault, not about sync
    assert about.topic_size == 5
    first = encode(about.notes[0])
    assert first["hit"] and 0 < first["relevance"] <= 1
    assert first["topicBacklinks"] == 4  # the other Sync notes and Settings link to it
    plain = encode(e.rank(n=3))
    assert plain["topicSize"] == 0 and plain["notes"][0]["relevance"] is None
    e.close()
