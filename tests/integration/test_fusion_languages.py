"""Hybrid fusion on a two-language vault with the real embedders (slow): an English question
whose keyword hits are German notes leans on the vector list when the embedder serves both
languages (multilingual-e5-small), and keeps its keyword list when it does not (MiniLM)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram import config
from engram.codec import encode
from engram.models import sources
from engram.search.fusion import RRF_K, top_rank_bonus
from engram.service import Engram
from tests.conftest import write_tree

pytestmark = pytest.mark.slow

# The questions share no word with the notes of the other language's side but the names the
# German notes borrow ("Community Plugins", "Obsidian"), and no stopword with the English notes.
NOTES = {
    "de/community-plugins.md": (
        "# Community Plugins\n\nCommunity Plugins erweitern Obsidian um neue Funktionen. Öffne "
        "die Einstellungen, wähle den Bereich Community Plugins und suche nach einer "
        "Erweiterung, die du installieren möchtest. Danach musst du sie noch aktivieren.\n"
    ),
    "de/plugin-sicherheit.md": (
        "# Sicherheit von Erweiterungen\n\nCommunity Plugins laufen mit denselben Rechten wie "
        "Obsidian selbst. Prüfe deshalb, wer eine Erweiterung geschrieben hat, bevor du ihr "
        "deine Notizen anvertraust, und lies die Bewertungen anderer Nutzer.\n"
    ),
    "de/designs.md": (
        "# Designs\n\nMit Designs änderst du das Aussehen von Obsidian: Farben, Schriftarten "
        "und Abstände. Die Designs der Gemeinschaft findest du ebenfalls in den Einstellungen, "
        "unter Darstellung.\n"
    ),
    "en/phone.md": (
        "# Phone and computer\n\nTo keep a vault the same on a phone and a computer, turn on "
        "Sync under Settings, pick a remote vault and wait for the first upload to finish "
        "before editing on the second device.\n"
    ),
    "en/backups.md": (
        "# Backups\n\nCopy the vault folder to another disk every week. A backup kept in a "
        "second place survives a broken laptop, a stolen phone or an accidental deletion.\n"
    ),
}
GERMAN_QUESTION = "install community plugins"
ENGLISH_QUESTION = "sync vault phone computer"


@pytest.fixture(scope="module")
def e5() -> Path:
    return sources.pull("multilingual", config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"))


def engram_with(model: Path, vault: Path, home: Path) -> Engram:
    """A facade with its own index and configuration, embedding with `model`."""
    env = {
        **os.environ,
        "ENGRAM_EMBED_MODEL": str(model),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    e = Engram(config.resolve(env))
    e.collection_add(str(vault), "notes")
    e.update()
    e.embed()  # also records each note's language
    return e


def explained(e: Engram, question: str) -> dict[str, dict]:  # type: ignore[type-arg]
    run = e.query_run(question, n=5, expand=False, rerank=False, explain=True)
    return {r.path: r.explain for r in run.results if r.explain is not None}


def vector_only(explain: dict) -> float:  # type: ignore[type-arg]
    """The fused score the vector list alone gives a result (weight 2, as `query` uses)."""
    rank = explain["lists"]["vec:original"]["rank"]
    return 2.0 / (RRF_K + rank) + top_rank_bonus((rank,))


def test_keyword_hits_in_another_language_give_way_to_a_multilingual_vector_list(
    xdg: dict[str, str], tmp_path: Path, e5: Path, minilm: Path
) -> None:
    vault = write_tree(tmp_path / "vault", NOTES)
    with engram_with(e5, vault, tmp_path / "e5") as e:
        assert encode(e.status())["languages"]["languages"] == {"de": 3, "en": 2}
        german = explained(e, GERMAN_QUESTION)
        keyword_hits = [p for p, x in german.items() if "bm25:original" in x["lists"]]
        assert keyword_hits and all(p.startswith("de/") for p in keyword_hits)
        for x in german.values():  # the German keyword hits add nothing to any score
            assert x["rrf"] + x["bonus"] == pytest.approx(vector_only(x), abs=1e-6)
        vsearch = [r.path for r in e.vsearch(GERMAN_QUESTION, n=5)]
        assert list(german) == vsearch[: len(german)]
        english = explained(e, ENGLISH_QUESTION)  # English over English notes: kept
        top, x = next(iter(english.items()))
        assert top == "en/phone.md" and "bm25:original" in x["lists"]
        assert x["rrf"] + x["bonus"] > vector_only(x) + 1e-3
    # MiniLM cannot match across the languages: the keyword list is not discounted for them
    # (its hits still add to the score), while the vector list, whose first hits are German
    # notes MiniLM does not read, counts at its own trust
    with engram_with(minilm, vault, tmp_path / "minilm") as e:
        run = e.query_run(GERMAN_QUESTION, n=5, expand=False, rerank=False, explain=True)
        trust = float(run.stages["trust vec:original"].split()[0])
        assert 0.0 < trust < 1.0
        first = next(
            r.explain for r in run.results if r.explain and "bm25:original" in r.explain["lists"]
        )
        assert first["rrf"] + first["bonus"] > trust * vector_only(first) + 1e-3
