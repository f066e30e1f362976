"""Recall's relevance floor with the real MiniLM embeddings: a vector list ranks every fact, so
a fact the keywords miss must be similar enough to the query (docs/memory.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import config
from engram.service import Engram
from tests.conftest import EngramCli, isolated_env

FACTS = {
    "espresso": "Espresso dial-in uses 18 g in, 36 g out over 28 seconds.",
    "decisions": "Ana prefers decisions written down as notes before the weekly sync.",
    "backups": "Backups of the production database run nightly at 02:00 UTC.",
    "payflow": "PayFlow was chosen as payment provider because it can pause subscriptions.",
    "friday": "Never deploy on Fridays: the last Friday release broke checkout for a day.",
    "keyring": "Decided to store secrets in the system keyring, never in the repository.",
}
UNRELATED = ["volcano eruption", "history of the roman empire", "how to knit a scarf"]


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory, minilm: Path) -> Iterator[Engram]:
    """A vault holding FACTS, embedded with MiniLM once for the module."""
    root = tmp_path_factory.mktemp("recall-minilm")
    with isolated_env(root, ENGRAM_EMBED_MODEL=str(minilm)):
        e = Engram(config.resolve(os.environ))
        (root / "vault").mkdir()
        e.init_vault(str(root / "vault"))
        for text in FACTS.values():
            e.fact_add(text, importance=0.5)
        e.embed()
        yield e
        e.close()


def found(e: Engram, query: str) -> list[str]:
    texts = {v: k for k, v in FACTS.items()}
    return [texts[h.fact.text] for h in e.recall(query).results if h.fact]


@pytest.mark.parametrize("query", UNRELATED)
def test_unrelated_queries_recall_nothing(mem: Engram, query: str) -> None:
    assert found(mem, query) == []
    context = mem.memory_context(query)
    assert [item for item in context.items if item.source == "search"] == []


@pytest.mark.parametrize(
    ("query", "fact"),
    [
        ("coffee brewing ratio", "espresso"),  # no word in common: found by meaning
        ("where do we keep passwords and API keys", "keyring"),
        ("is it ok to release at the end of the week", "friday"),
        ("production database", "backups"),  # words in common: the keyword list finds it
    ],
)
def test_related_queries_still_recall_their_fact(mem: Engram, query: str, fact: str) -> None:
    got = found(mem, query)
    assert got and got[0] == fact
    assert len(got) < len(FACTS)  # the floor, not the list length, decides what is relevant
    context = mem.memory_context(query)
    assert any(FACTS[fact][:20] in item.text for item in context.items if item.source == "search")


def test_cli_recall_of_an_unrelated_query_is_empty(mem: Engram) -> None:
    # in the module's environment (the `run` fixture's own would replace it)
    found = EngramCli().json({}, "recall", "volcano eruption", "--no-daemon")
    assert found["results"] == [] and found["window"] is None
