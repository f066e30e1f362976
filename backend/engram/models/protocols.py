"""What the rest of Engram may ask of a model: Embedder, Reranker, Generator.

One real implementation each lives in `llama.py` (llama.cpp); `fake.py` has a deterministic
embedder for fast tests. Values crossing these Protocols are plain lists and frozen dataclasses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from engram.codec import arg

Vector = list[float]


class ModelError(Exception):
    """A model cannot be found, fetched, converted or loaded; the message says what to do."""


@dataclass(frozen=True)
class Prompts:
    """Text a model expects before a query or a document (e5 `query: `, nomic `search_query: `)."""

    query: str = ""
    document: str = ""


@dataclass(frozen=True)
class GGUFInfo:
    """What a GGUF file says about itself: enough for `engram models info` and for loading.
    Its JSON names the fields as written here (`models info --json` always has)."""

    path: Path
    size_bytes: int = arg(wire="size_bytes")
    sha256: str = arg()
    architecture: str = arg()
    name: str = arg()
    # "F16", "Q8_0", ... (from general.file_type, else the dominant tensor type)
    file_type: str = arg(wire="file_type")
    context_length: int = arg(wire="context_length")
    # sentence-transformers' limit when the converter recorded it, else 0
    max_seq_length: int = arg(wire="max_seq_length")
    embedding_length: int = arg(wire="embedding_length")
    block_count: int = arg(wire="block_count")
    pooling: str = arg()  # "none" | "mean" | "cls" | "last" | "rank" | "unspecified"
    tokenizer: str = arg()  # tokenizer.ggml.model: "bert", "llama", "gpt2", "t5", ...
    vocab_size: int = arg(wire="vocab_size")
    n_tensors: int = arg(wire="n_tensors")
    classifier_labels: tuple[str, ...] = arg((), wire="classifier_labels")
    has_chat_template: bool = arg(False, wire="has_chat_template")
    prompts: Prompts = Prompts()

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"modelId": "model_id"}

    @property
    def model_id(self) -> str:
        """Stable identity: file stem plus the first 12 hex of its sha256."""
        return f"{self.path.stem}@{self.sha256[:12]}"


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length vectors; `model_id` + `dim` identify stored vectors."""

    model_id: str
    dim: int
    max_tokens: int  # the model's sequence limit, special tokens included (MiniLM: 256)

    @property
    def max_text_tokens(self) -> int:
        """Largest `count_tokens(document text)` that embeds without truncation."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` alone (no special tokens, no prefix)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One normalized vector per text, in order; over-long texts are truncated."""
        ...

    def embed_query(self, text: str) -> Vector:
        """The normalized vector of a search query, with the model's query prefix applied."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each document answers a query, 0..1 (higher is better)."""

    model_id: str

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score in 0..1 per document, in order."""
        ...


@runtime_checkable
class Generator(Protocol):
    """A small instruct model used for query expansion."""

    model_id: str

    def expand(self, query: str, n: int = 2) -> list[str]:
        """Up to `n` alternative search queries, deterministic for a given model and query."""
        ...
