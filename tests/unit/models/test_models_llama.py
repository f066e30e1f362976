"""The llama.cpp embedder, rerankers and generator on tiny generated GGUF models."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from engram.models import Embedder, Generator, Reranker
from engram.models.llama import LlamaEmbedder, load_embedder, system_info
from engram.models.llama_generate import LlamaGenerator, load_generator
from engram.models.llama_rerank import (
    CrossEncoderReranker,
    LLMReranker,
    load_reranker,
    positive_index,
    to_probability,
)
from engram.models.protocols import ModelError
from tests.fixtures.tiny_gguf import bert_forward, cross_encoder_score, mean_embedding

TEXTS = [
    "the cat runs in the garden",
    "python code for sqlite search",
    "rain and snow",
    "Ünïcödé text 日本 🚀",
    "",
]


def tiny_bert_weights(gguf_path: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(gguf_path.parent / gguf_path.stem / "model.safetensors"))


def cosine(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_embeddings_match_an_independent_numpy_bert(tiny) -> None:
    embedder = load_embedder(tiny.embed)
    assert isinstance(embedder, Embedder)
    for text, vector in zip(TEXTS, embedder.embed_documents(TEXTS), strict=True):
        reference = mean_embedding(tiny.embed_weights, embedder.tokenize(text), heads=2)
        assert cosine(reference, vector) >= 0.999
        assert math.isclose(float(np.linalg.norm(vector)), 1.0, rel_tol=1e-5)


def test_identity_limits_and_tokens(tiny) -> None:
    embedder = load_embedder(tiny.embed)
    assert embedder.dim == 64 and len(embedder.embed_query("cat")) == 64
    assert embedder.model_id.startswith("embed@")
    assert embedder.max_tokens == 64  # sentence_bert_config's max_seq_length, not the 512 context
    assert embedder.max_text_tokens == 62  # minus [CLS] and [SEP]
    ids = embedder.tokenize("the cats")
    assert len(ids) == embedder.count_tokens("the cats") + 2
    assert embedder.detokenize(ids).strip() == "the cats"
    assert embedder.count_tokens("") == 0


def test_batching_does_not_change_vectors(tiny) -> None:
    embedder = load_embedder(tiny.embed)
    texts = [f"{'the cat ' * (i % 7)}note {i} garden" for i in range(40)]
    batched = np.array(embedder.embed_documents(texts))
    single = np.array([embedder.embed_documents([t])[0] for t in texts])
    # the same vectors up to f16 rounding inside llama.cpp (batch shapes differ)
    assert all(cosine(a, b) >= 0.9999 for a, b in zip(batched, single, strict=True))
    for text, vector in zip(texts, batched, strict=True):  # no bleed between packed sequences
        reference = mean_embedding(tiny.embed_weights, embedder.tokenize(text), heads=2)
        assert cosine(reference, vector) >= 0.999
    assert embedder.embed_documents([]) == []


def test_long_texts_are_truncated_to_the_model_limit(tiny) -> None:
    embedder = load_embedder(tiny.embed)
    words = "the cat " * 100
    ids = embedder.tokenize(words)
    assert len(ids) > embedder.max_tokens
    kept = ids[: embedder.max_tokens - 1] + ids[-1:]  # [CLS] ... [SEP]
    vector = embedder.embed_documents([words])[0]
    assert cosine(mean_embedding(tiny.embed_weights, kept, heads=2), vector) >= 0.999


def test_query_and_document_prompts(tiny) -> None:
    embedder = load_embedder(tiny.embed_prompted)
    assert embedder.prompts.query == "query: "
    assert embedder.max_text_tokens == 64 - 2 - embedder.count_tokens("passage: ")
    weights = tiny_bert_weights(tiny.embed_prompted)
    query = mean_embedding(weights, embedder.tokenize("query: cat"), heads=2)
    doc = mean_embedding(weights, embedder.tokenize("passage: cat"), heads=2)
    assert cosine(embedder.embed_query("cat"), query) >= 0.999
    assert cosine(embedder.embed_documents(["cat"])[0], doc) >= 0.999


def test_a_long_query_is_pooled_over_all_its_windows(tiny) -> None:
    """Past the model's limit a query is cut into windows that each start like a query
    ([CLS] + prefix) and end with [SEP], cover every token once, and are pooled together."""
    embedder = load_embedder(tiny.embed_prompted)  # 64 tokens, "query: " prefix
    words = "the cat runs in the garden " * 30
    tokens = embedder.tokenize("query: " + words)
    head = tokens[: 1 + embedder.count_tokens("query: ")]
    windows = embedder.query_windows(tokens)
    assert len(windows) > 2 and all(len(w) <= embedder.max_tokens for w in windows)
    assert all(w[: len(head)] == head and w[-1] == tokens[-1] for w in windows)
    assert [t for w in windows for t in w[len(head) : -1]] == tokens[len(head) : -1]
    weights = tiny_bert_weights(tiny.embed_prompted)
    # MEAN pooling over every token of every window (each token seen in its own window)
    pooled = sum(bert_forward(weights, w, 2).sum(0) for w in windows)
    assert cosine(embedder.embed_query(words), pooled) >= 0.999


def test_models_load_once_per_process(tiny) -> None:
    assert load_embedder(tiny.embed) is load_embedder(tiny.embed)
    assert load_embedder(tiny.embed, n_threads=1) is not load_embedder(tiny.embed)


def test_quantized_model_loads_and_embeds(tiny) -> None:
    """A Q8_0 model crashes native AMX builds (MODELS.md): this must run, and match f16."""
    q8 = LlamaEmbedder(tiny.embed_q8, n_threads=1)
    f16 = load_embedder(tiny.embed)
    for a, b in zip(q8.embed_documents(TEXTS[:3]), f16.embed_documents(TEXTS[:3]), strict=True):
        assert cosine(a, b) >= 0.99
    q8.close()


def test_system_info_reports_the_build() -> None:
    info = system_info()
    assert "AVX" in info.text or "NEON" in info.text or info.features
    assert info.amx_build is False, "this llama.cpp build enables AMX: quantized models crash"


def test_wrong_files_fail_with_model_error(tmp_path: Path, tiny) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        load_embedder(tmp_path / "missing.gguf")
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelError):
        LlamaEmbedder(junk)
    with pytest.raises(ModelError, match="reranker"):
        LlamaEmbedder(tiny.rerank)
    with pytest.raises(ModelError, match="embedding model"):
        load_reranker(tiny.embed)
    with pytest.raises(ModelError, match=r"encoder model .* not a text generator"):
        load_generator(tiny.embed)


def test_generator_errors_inside_llama_cpp_become_model_errors(
    tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An encoder that slips past the architecture check trips llama_cpp's own assertion
    (no KV cache); the caller must get a ModelError, not an AssertionError."""
    import engram.models.llama_generate as gen

    monkeypatch.setattr(gen.roles, "ENCODER_ARCHS", ())
    with pytest.raises(ModelError, match="query expansion failed"):
        gen.LlamaGenerator(tiny.embed).expand("cat garden")


def test_cross_encoder_matches_numpy_and_is_batch_independent(tiny) -> None:
    reranker = load_reranker(tiny.rerank)
    assert isinstance(reranker, CrossEncoderReranker) and isinstance(reranker, Reranker)
    docs = ["the cat runs in the garden", "python code", "the dog", "x " * 700]
    scores = reranker.score("cat garden", docs)
    for doc, score in zip(docs, scores, strict=True):
        ids = reranker.pair_tokens("cat garden", doc)
        assert len(ids) <= reranker.max_tokens
        assert ids.count(3) == 2 and ids[0] == 2  # [CLS] query [SEP] document [SEP]
        assert abs(cross_encoder_score(tiny.rerank_weights, ids, heads=2) - score) < 2e-3
        assert 0.0 < score < 1.0
    assert reranker.score("cat garden", docs[::-1]) == pytest.approx(scores[::-1], abs=1e-5)
    assert reranker.score("cat garden", []) == []


def test_llm_reranker_scores_match_a_fresh_evaluation(tiny) -> None:
    """The cached query prefix must give the same P(yes) as evaluating each prompt whole."""
    import llama_cpp

    for path in (tiny.llama, tiny.chat):
        reranker = load_reranker(path)
        assert isinstance(reranker, LLMReranker)
        docs = ["the cat runs in the garden", "python code for sqlite", "no"]
        scores = reranker.score("cat garden", docs)
        assert all(0.0 < s < 1.0 for s in scores)
        fresh = llama_cpp.Llama(
            str(path), n_ctx=512, logits_all=True, verbose=False, flash_attn=True
        )
        for doc, score in zip(docs, scores, strict=True):
            tokens = (
                reranker._tokens(reranker._prefix.format(query="cat garden"), True, True)
                + reranker._tokens(doc)
                + reranker._tokens(reranker._suffix, True)
            )
            fresh.reset()
            fresh.eval(tokens)
            logits = fresh.scores[len(tokens) - 1]
            expected = 1 / (1 + math.exp(logits[reranker._no] - logits[reranker._yes]))
            assert score == pytest.approx(expected, abs=5e-3)  # f16 KV cache, batch shapes
        fresh.close()
    assert load_reranker(tiny.chat)._prefix.startswith("<|im_start|>system")
    assert not load_reranker(tiny.llama)._prefix.startswith("<|im_start|>")


@pytest.mark.parametrize(
    ("row", "positive", "expected"),
    [
        ([0.0], 0, 0.5),
        ([100.0], 0, 1.0),
        ([-100.0], 0, 0.0),
        ([2.0, 2.0], 0, 0.5),
        ([10.0, -10.0], 0, 1.0),
        ([10.0, -10.0], 1, 0.0),
    ],
)
def test_to_probability(row, positive, expected) -> None:
    assert to_probability(np.array(row, dtype=np.float32), positive) == pytest.approx(
        expected, abs=1e-6
    )


@pytest.mark.parametrize(
    ("labels", "n_out", "expected"),
    [
        ((), 1, 0),
        (("LABEL_0",), 1, 0),
        (("yes", "no"), 2, 0),
        (("no", "yes"), 2, 1),
        ((), 2, 1),
    ],
)
def test_positive_index(labels, n_out, expected) -> None:
    assert positive_index(labels, n_out) == expected


def test_generator_is_deterministic_and_clean(tiny) -> None:
    for path, chat in ((tiny.llama, False), (tiny.chat, True)):
        generator = load_generator(path)
        assert isinstance(generator, LlamaGenerator) and isinstance(generator, Generator)
        assert generator.chat is chat
        first = generator.expand("cat garden", n=2)
        assert first == generator.expand("cat garden", n=2)
        assert len(first) <= 2
        for line in first:
            assert line == line.strip() and line.casefold() != "cat garden"
            assert line.isprintable() and 2 <= len(line) <= 200
        assert generator.expand("   ", n=2) == [] and generator.expand("x", n=0) == []


@pytest.mark.parametrize("chat", [True, False])
def test_expansion_keeps_the_query_script(tmp_path: Path, chat: bool) -> None:
    """A generated model that answers every query with one English and two Chinese lines
    (as small models answer Chinese queries in English, qmd #454/#920)."""
    from tests.fixtures.tiny_gguf import write_scripted_llama

    lines = ["sync notes between computers", "同步笔记的方法", "两台电脑之间同步"]
    generator = LlamaGenerator(write_scripted_llama(tmp_path / "s.gguf", lines, chat=chat))
    assert generator.chat is chat
    assert generator.expand("如何同步笔记", n=2) == ["同步笔记的方法", "两台电脑之间同步"]
    assert generator.expand("how do I sync notes", n=2) == ["sync notes between computers"]
    generator.close()


def test_a_query_does_not_wait_for_a_batch_in_another_context(tiny) -> None:
    """The daemon embeds passages in its own "background" context: a query embedded meanwhile
    finishes while that batch is still running, not after it."""
    background = load_embedder(tiny.embed, context="background")
    main = load_embedder(tiny.embed)
    assert background is not main and background.llm.ctx != main.llm.ctx
    order: list[str] = []
    passages = [f"{i} the cat runs in the garden and the dog sleeps" * 4 for i in range(1000)]

    def long_batch() -> None:
        background.embed_documents(passages)
        order.append("batch")

    worker = threading.Thread(target=long_batch)
    worker.start()
    deadline = time.monotonic() + 30
    while not background._lock.locked() and time.monotonic() < deadline:
        time.sleep(0.001)  # until the batch is in progress
    assert background._lock.locked()
    main.embed_query("cat")
    order.append("query")
    worker.join()
    assert order == ["query", "batch"]
