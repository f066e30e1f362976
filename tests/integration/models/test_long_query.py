"""A query longer than the model's window is embedded from all of it (real MiniLM, slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engram.models.llama import MAX_QUERY_WINDOWS, load_embedder

pytestmark = pytest.mark.slow

FILLER = (
    "Bring a large pot of salted water to a rolling boil before the pasta goes in, stir it "
    "during the first minute so it does not stick, and taste it a minute before the time on "
    "the packet. "
)
FACT = "Separately, SQLite's FTS5 extension provides full-text search with BM25 ranking."


def test_a_short_query_is_embedded_as_before(minilm: Path) -> None:
    embedder = load_embedder(minilm)
    text = "how do I make my laptop faster?"
    tokens = embedder.tokenize(text)
    assert embedder.query_windows(tokens) == [tokens]
    # MiniLM has no query prefix: the query vector is the text's own (truncation-free) vector
    (document,) = embedder.embed_documents([text])
    assert np.allclose(embedder.embed_query(text), document, atol=1e-6)


def test_a_fact_in_the_tail_of_a_long_query_is_found(minilm: Path) -> None:
    embedder = load_embedder(minilm)
    # the fact starts past the model's 256 tokens and is a quarter of what the query says:
    # windows are pooled by their lengths, so it weighs as much as in the whole text
    query = FILLER * 8 + FACT * 6
    assert embedder.count_tokens(FILLER * 8) > embedder.max_text_tokens
    fts, laptop = np.asarray(
        embedder.embed_documents(
            [
                "The FTS5 module of SQLite adds full-text search, ranked by BM25.",
                "Tips to speed up a slow computer: disable startup programs and add RAM.",
            ]
        )
    )
    whole = np.asarray(embedder.embed_query(query))
    (first_window,) = np.asarray(embedder.embed_documents([query]))  # documents are truncated
    assert whole @ fts > first_window @ fts + 0.1
    assert whole @ fts > whole @ laptop  # and it ranks the passage that states it first


def test_windows_cover_the_query_once_within_the_model_limit(minilm: Path) -> None:
    embedder = load_embedder(minilm)
    tokens = embedder.tokenize(FILLER * 8 + FACT)
    windows = embedder.query_windows(tokens)
    assert len(windows) == 2 and all(len(w) <= embedder.max_tokens for w in windows)
    assert all(w[0] == tokens[0] and w[-1] == tokens[-1] for w in windows)  # [CLS] .. [SEP]
    assert [t for w in windows for t in w[1:-1]] == tokens[1:-1]  # every token, in order, once


def test_a_huge_query_costs_at_most_a_bounded_number_of_windows(minilm: Path) -> None:
    embedder = load_embedder(minilm)
    tokens = embedder.tokenize(FILLER * 400)
    windows = embedder.query_windows(tokens)
    assert len(windows) == MAX_QUERY_WINDOWS
    assert len(np.asarray(embedder.embed_query(FILLER * 400))) == embedder.dim


def test_a_query_is_read_up_to_a_bound_before_it_is_tokenized(minilm: Path) -> None:
    from engram.models.llama import MAX_QUERY_CHARS_PER_TOKEN

    embedder = load_embedder(minilm)
    bound = MAX_QUERY_WINDOWS * embedder.max_tokens * MAX_QUERY_CHARS_PER_TOKEN
    huge = FILLER * (10 * bound // len(FILLER) + 10)  # ten times what is read
    assert len(huge) > 10 * bound
    assert np.allclose(embedder.embed_query(huge), embedder.embed_query(huge[:bound]))
