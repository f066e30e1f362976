"""vsearch end to end with the real MiniLM GGUF through the `engram` CLI (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EngramCli

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"


def test_embed_and_vsearch_with_minilm(run: EngramCli, xdg: dict[str, str], minilm: Path) -> None:
    env = {**xdg, "ENGRAM_EMBED_MODEL": str(minilm)}
    run(env, "collection", "add", str(EXAMPLE), "--name", "example")
    report = run.json(env, "embed")
    assert report["model"].startswith("all-MiniLM-L6-v2") and report["dim"] == 384
    assert report["embedded"] == report["chunks"] >= 11

    def top(query: str, n: int = 3) -> list[str]:
        rows = run.json(env, "vsearch", query, "-n", str(n))
        return [r["path"] for r in rows]

    assert "People/Kenji Sato.md" in top("who is responsible for the design of the app")
    # no word in common with the note: MiniLM ranks it 0.150 against 0.158 for the meeting on
    # pricing (and 0.152 against 0.152 when titles were embedded twice), so second is a pass
    assert "Reference/Payment Providers.md" in top("which card processor did we pick", 2)
    assert top("brewing temperature and grind size for evaluation", 2)[0] == (
        "Reference/Cupping Protocol.md"
    )
    rows = run.json(env, "vsearch", "card processor fees", "tag:person")
    assert all(r["path"].startswith("People/") for r in rows)
    assert run.json(env, "update", "--embed")["embed"]["embedded"] == 0
