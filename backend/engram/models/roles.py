"""Which GGUF can serve which role (embed, rerank, generate), from its header alone.

The loaders refuse a wrong model with these messages, and `engram status` uses the same rules
to say which query stages would run without loading anything.
"""

from __future__ import annotations

from pathlib import Path

from .ggufinfo import read_kind
from .protocols import ModelError

# encoder-only architectures: they embed or classify text but cannot generate it
ENCODER_ARCHS = (
    "bert",
    "nomic-bert",
    "jina-bert-v2",
    "jina-bert-v3",
    "modern-bert",
    "neo-bert",
    "eurobert",
    "xlm-roberta",
    "t5encoder",
)


def problem(architecture: str, pooling: str, role: str, name: str) -> str | None:
    """Why a model of this architecture and pooling cannot serve `role`, or None."""
    if role == "embed" and pooling == "rank":
        return f"{name} is a reranker (RANK pooling), not an embedding model"
    if role == "rerank" and architecture in ENCODER_ARCHS and pooling != "rank":
        return (
            f"{name} is an embedding model ({pooling} pooling), "
            "not a reranker: a cross-encoder GGUF has RANK pooling"
        )
    if role == "generate" and architecture in ENCODER_ARCHS:
        # llama.cpp would load it and then fail on the first token (no KV cache)
        return (
            f"{name} is an encoder model ({architecture}: it embeds or ranks text), not a "
            "text generator: query expansion needs a decoder GGUF (a small instruct model)"
        )
    return None


def check(path: Path, role: str) -> None:
    """ModelError when the file is unreadable or cannot serve `role` (header only, no load)."""
    architecture, pooling = read_kind(path)
    reason = problem(architecture, pooling, role, path.name)
    if reason:
        raise ModelError(reason)
