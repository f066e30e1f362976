"""An indexed note with no vectors yet is "not embedded yet", with what to run; never a bare
"0 chunks" that reads as broken."""

from __future__ import annotations

import os
from pathlib import Path

from engram import config
from engram.codec import encode
from engram.models.fake import FakeEmbedder
from engram.service import Engram
from tests.conftest import EngramCli


def test_status_and_panel_say_what_is_not_embedded_yet(
    run: EngramCli, xdg: dict[str, str], tiny_vault: Path
) -> None:
    e = Engram(config.resolve(os.environ), embedder=FakeEmbedder(dim=32))
    e.collection_add(str(tiny_vault), "notes")
    e.update()
    documents = encode(e.status())["documents"]
    assert encode(e.status())["embeddings"]["documentsNotEmbedded"] == documents == 6
    before = encode(e.note_panel("notes", "Projects/Pricing.md"))["coverage"]
    assert before["indexed"] and not before["embedded"] and before["chunks"] == 0
    out = run(xdg, "status").stdout
    assert "6 notes not embedded yet: run engram embed" in out

    e.embed()
    assert encode(e.status())["embeddings"]["documentsNotEmbedded"] == 0
    after = encode(e.note_panel("notes", "Projects/Pricing.md"))["coverage"]
    assert after["embedded"] and after["chunks"] > 0
    empty = encode(e.note_panel("notes", "Empty.md"))["coverage"]
    assert empty["embedded"] and empty["chunks"] == 0  # nothing to embed is not "not yet"
    e.close()
