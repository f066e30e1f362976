"""Tiny generated GGUF models shared by the model tests (built once per session, ~0.3 s)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from engram.models.convert import convert_bert
from safetensors.numpy import load_file

from tests.fixtures.tiny_gguf import tiny_bert_dir, write_tiny_llama


@dataclass(frozen=True)
class TinyModels:
    """Paths of the generated models plus the weights they were made from."""

    embed: Path
    embed_q8: Path
    embed_prompted: Path
    rerank: Path
    llama: Path
    chat: Path
    embed_weights: dict[str, np.ndarray]
    rerank_weights: dict[str, np.ndarray]


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyModels:
    """All tiny models, generated into a session temp folder."""
    root = tmp_path_factory.mktemp("tiny-models")
    bert = tiny_bert_dir(root / "bert")
    rerank = tiny_bert_dir(root / "rerank", reranker=True)
    prompted = tiny_bert_dir(root / "prompted", seed=3)
    (prompted / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "query: ", "passage": "passage: "}}), encoding="utf-8"
    )
    return TinyModels(
        embed=convert_bert(bert, root / "embed.gguf").path,
        embed_q8=convert_bert(bert, root / "embed.q8_0.gguf", dtype="q8_0").path,
        embed_prompted=convert_bert(prompted, root / "prompted.gguf", dtype="f32").path,
        rerank=convert_bert(rerank, root / "rerank.gguf").path,
        llama=write_tiny_llama(root / "llama.gguf"),
        chat=write_tiny_llama(root / "chat.gguf", chat=True),
        embed_weights=load_file(str(bert / "model.safetensors")),
        rerank_weights=load_file(str(rerank / "model.safetensors")),
    )
