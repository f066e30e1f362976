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
