"""A deterministic fake embedder for fast tests of code downstream of the models.

Each word maps to a fixed pseudo-random unit vector (seeded by its hash), a text is the
normalized sum of its words' vectors: texts sharing words are close, unrelated texts are not.
Same protocol as the llama embedder, no model file, microseconds per text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from .protocols import Vector

_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class FakeEmbedder:
    """Hash-based bag-of-words vectors; `count_tokens` counts words and punctuation."""

    def __init__(self, dim: int = 64, max_tokens: int = 256, query_prefix: str = "") -> None:
        self.dim = dim
        self.max_tokens = max_tokens
        self.model_id = f"fake-hash@{dim}"
        self.query_prefix = query_prefix
        self.calls: list[int] = []  # batch sizes seen, so tests can check batching and dedup

    @property
    def max_text_tokens(self) -> int:
        """Largest `count_tokens(text)` that embeds without truncation."""
        return self.max_tokens - 2

    def tokenize(self, text: str) -> list[str]:
        """Lowercased words and punctuation marks."""
        return _WORD.findall(text.lower())

    def count_tokens(self, text: str) -> int:
        """Words and punctuation marks in `text`."""
        return len(self.tokenize(text))

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One unit vector per text, in order."""
        self.calls.append(len(texts))
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> Vector:
        """The unit vector of the query (with the optional prefix)."""
        return self._vector(self.query_prefix + text)

    def _vector(self, text: str) -> Vector:
        total = np.zeros(self.dim, dtype=np.float64)
        for token in self.tokenize(text)[: self.max_text_tokens]:
            seed = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            total += np.random.default_rng(seed).standard_normal(self.dim)
        norm = float(np.linalg.norm(total))
        if norm == 0:
            total[0], norm = 1.0, 1.0  # empty text: a fixed unit vector, never NaN
        return [float(x) for x in total / norm]
