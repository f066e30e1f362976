"""The fake embedder and the query-expansion parser (pure, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from engram.models import Embedder
from engram.models.expand import chat_messages, completion_prompt, parse_expansions
from engram.models.fake import FakeEmbedder


def test_fake_embedder_is_a_deterministic_embedder() -> None:
    fake = FakeEmbedder(dim=32)
    assert isinstance(fake, Embedder)
    a, b, c = fake.embed_documents(["Cats and dogs", "cats AND dogs!", "quarterly budget"])
    assert a == FakeEmbedder(dim=32).embed_documents(["Cats and dogs"])[0]
    assert np.dot(a, b) > 0.8 > np.dot(a, c)
    assert all(abs(np.linalg.norm(v) - 1) < 1e-9 for v in (a, b, c))
    assert len(fake.embed_query("")) == 32 and fake.calls == [3]
    assert fake.count_tokens("Hello, world!") == 4 and fake.model_id == "fake-hash@32"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "cheap flights\nbudget airlines\nlow cost air travel",
            ["budget airlines", "low cost air travel"],
        ),
        ("1. budget airlines\n2) low-cost carriers\n", ["budget airlines", "low-cost carriers"]),
        ('- "budget airlines"\n* `discount fares`', ["budget airlines", "discount fares"]),
        (
            "<think>the user wants flights</think>\nlex: budget airlines\nvec: discount fares",
            ["budget airlines", "discount fares"],
        ),
        ("<think>never closed", []),
        ("Here are some queries:\nbudget airlines", ["budget airlines"]),
        ("budget airlines\nBudget  Airlines\nbudget airlines", ["budget airlines"]),
        ("a\n\x07\x1b[31mdiscount\x00 fares", ["discount fares"]),
        ("", []),
    ],
)
def test_parse_expansions(output: str, expected: list[str]) -> None:
    assert parse_expansions(output, "Cheap  Flights", 2) == expected


def test_parse_expansions_caps_length_and_count() -> None:
    lines = "\n".join(f"query number {i} " + "x" * 300 for i in range(5))
    out = parse_expansions(lines, "q", 3)
    assert len(out) == 3 and all(len(line) <= 200 for line in out)


def test_prompts() -> None:
    messages = chat_messages("cheap flights", 2, no_think=True)
    assert messages[0]["role"] == "system" and "2 alternative" in messages[0]["content"]
    assert messages[1]["content"] == "cheap flights /no_think"
    assert completion_prompt("cheap\n flights").endswith(
        "Search query: cheap flights\nAlternative search queries:\n-"
    )


@pytest.mark.parametrize(
    ("query", "output", "expected"),
    [
        ("如何同步笔记", "sync notes between computers\n同步笔记的方法", ["同步笔记的方法"]),
        ("Obsidian 同步", "Obsidian vault sync\nObsidian 仓库同步", ["Obsidian 仓库同步"]),
        ("保管庫の同期", "vault sync\n保管庫を同期する方法", ["保管庫を同期する方法"]),
        ("синхронизация заметок", "note sync\nсинхронизация файлов", ["синхронизация файлов"]),
        ("sync notes", "同步笔记\nkeep notes in sync\nсинхронизация", ["keep notes in sync"]),
        ("Tresor synchronisieren", "Tresor abgleichen\n同步", ["Tresor abgleichen"]),
    ],
)
def test_expansions_in_another_script_are_dropped(
    query: str, output: str, expected: list[str]
) -> None:
    assert parse_expansions(output, query, 2) == expected


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("Wie synchronisiere ich meinen Tresor zwischen zwei Rechnern?", "in German"),
        ("如何在两台电脑之间同步我的仓库？", "in Chinese"),
        ("how do I sync my vault between two computers?", "in English"),
        ("x1", "in the language of the query"),  # too short to tell: no guess
    ],
)
def test_the_generator_is_asked_for_the_query_language(query: str, wanted: str) -> None:
    assert wanted in chat_messages(query, 2)[0]["content"]


def test_a_base_model_is_asked_for_a_language_other_than_its_examples() -> None:
    assert completion_prompt("如何在两台电脑之间同步我的仓库？").endswith(
        "Alternative search queries in Chinese:\n-"
    )
    assert completion_prompt("how do I sync my vault between two computers?").endswith(
        "Alternative search queries:\n-"
    )
