"""Typos: a word no note holds is searched as the closest word the index holds, and says so;
hybrid scores reach 1.0 only with evidence from every list the query could use."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import config
from engram.models.fake import FakeEmbedder
from engram.search import spelling
from engram.search.query import STOPWORDS, parse_query
from engram.service import Engram
from tests.conftest import EngramCli, write_tree

NOTES = {
    "Command palette.md": "# Command palette\n\nOpen the command palette with Mod+P.\n",
    "Keyboard shortcuts.md": "# Keyboard shortcuts\n\nAssign keyboard shortcuts to commands.\n",
    "Keywords.md": "# Keywords\n\nA keyword search finds notes by their words.\n",
    "Sync.md": "# Sync\n\nSync your vault between phone and laptop.\n",
    "Canvas.md": "# Canvas\n\nA canvas lays cards out on a board.\n",
    "Collections.md": "# Collections\n\nA collection is a folder Engram indexes.\n",
}


@pytest.fixture
def typed(xdg: dict[str, str], tmp_path: Path) -> Iterator[Engram]:
    e = Engram(config.resolve(os.environ), embedder=FakeEmbedder(dim=32))
    e.collection_add(str(write_tree(tmp_path / "help", NOTES)), "help")
    e.update()
    e.embed()
    yield e
    e.close()


@pytest.mark.parametrize(
    ("typed_query", "meant"),
    [
        ("comand palete", "command palette"),  # a letter missed, one swapped for another
        ("sycn", "sync"),  # two letters swapped
        ("keybord shortcuts", "keyboard shortcuts"),  # keyboard, not keyword: found together
        ("colection", "collection"),
        ("commmand", "command"),  # a letter doubled
        ("command palette", "command palette"),  # nothing to correct
        ("xqzvw", "xqzvw"),  # nothing close enough
        ("cnvs", "cnvs"),  # two edits away at four letters: too far
        ("ComYMV virus", "ComYMV virus"),  # a name (a capital inside) is written as meant
        # most of the query is in the notes: the rest carries it, the stray word stays
        ("sync vault phone laptop canvas cards board colection", None),
    ],
)
def test_misspelled_words_become_indexed_words(typed: Engram, typed_query: str, meant: str) -> None:
    meant = meant or typed_query
    spelled = spelling.correct(typed.db.conn, parse_query(typed_query))
    assert spelled.query.text == meant
    assert (spelled.notice() is not None) == (meant != typed_query)


def test_only_plain_words_are_corrected(typed: Engram) -> None:
    for kept in ('"comand"', "coman*", "palette -comand", "cmd"):
        q = parse_query(kept)
        assert spelling.correct(typed.db.conn, q).query == q, kept


def test_one_edit_typos_of_indexed_words_find_them(typed: Engram) -> None:
    """Every word of the vault of five letters or more, with a letter dropped, doubled,
    swapped with the next or struck on a neighbouring key: the search finds a note holding
    the meant word, and the correction is an indexed word one edit from what was typed."""
    rng = random.Random(7)
    words = sorted({w.lower() for text in NOTES.values() for w in text.split() if w.isalpha()})
    words = [w for w in words if len(w) >= 5 and w not in STOPWORDS]
    meant_found = tried = 0
    for word in words:
        i = rng.randrange(1, len(word) - 1)
        for typo in (word[:i] + word[i + 1 :], word[:i] + word[i] + word[i:],
                     word[:i] + word[i + 1] + word[i] + word[i + 2 :]):  # fmt: skip
            spelled = spelling.correct(typed.db.conn, parse_query(typo))
            if not spelled.corrected:  # still a word the index holds (its stem)
                assert typed.search(typo), typo
                continue
            tried += 1
            ((wrong, right),) = spelled.corrected
            assert wrong == typo and spelling.slip(typo, right) <= 1.5, (typo, right)
            found = typed.search(typo)
            assert found and all(r.spelling == right for r in found)
            meant_found += any(word in (r.snippet + r.title).lower() for r in found)
    assert tried >= 20
    assert meant_found / tried >= 0.9, (meant_found, tried)


def test_hybrid_scores_one_only_with_evidence(typed: Engram) -> None:
    run = typed.query_run("comand palete", expand=False, rerank=False)
    assert run.results[0].path == "Command palette.md"
    assert any("showing results for 'command palette'" in n for n in run.notices)
    nonsense = typed.query_run("xqzvw blorft", expand=False, rerank=False)
    assert nonsense.results and max(r.score for r in nonsense.results) < 0.8
    exact = typed.query_run("command palette", expand=False, rerank=False)
    assert exact.results[0].score == pytest.approx(1.0)


def test_cli_says_what_it_searched_for(run: EngramCli, xdg: dict[str, str], tmp_path: Path) -> None:
    run(xdg, "collection", "add", str(write_tree(tmp_path / "help", NOTES)), "--name", "help")
    out = run(xdg, "search", "comand palete")
    assert out.stdout.startswith("help/Command palette.md")
    assert "showing results for 'command palette'" in out.stderr
    found = json.loads(run(xdg, "search", "comand palete", "--json").stdout)
    assert found[0]["spelling"] == "command palette"
    exact = json.loads(run(xdg, "search", "command palette", "--json").stdout)
    assert "spelling" not in exact[0] or exact[0]["spelling"] is None
