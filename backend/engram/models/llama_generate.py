"""Query expansion with a small GGUF instruct model on llama.cpp (greedy, fixed seed)."""

from __future__ import annotations

import threading
from pathlib import Path

from . import roles
from .expand import chat_messages, completion_prompt, parse_expansions
from .ggufinfo import read_info
from .llama import N_BATCH, cached, open_llama
from .protocols import ModelError

SEED = 1234
TOKENS_PER_EXPANSION = 24  # short queries; bounds latency (~10 tokens/s for 1.7B on 2 cores)
TOKENS_SLACK = 24  # a list marker, an empty <think></think> block


class LlamaGenerator:
    """Expands a query into a few alternative phrasings; deterministic for a model + query."""

    def __init__(self, path: Path, n_threads: int = 2, n_ctx: int = 2048) -> None:
        info = read_info(path)
        reason = roles.problem(info.architecture, info.pooling, "generate", path.name)
        if reason:
            raise ModelError(reason)
        self.model_id = info.model_id
        self.llm = open_llama(
            path,
            n_threads,
            n_ctx=min(n_ctx, info.context_length or n_ctx),
            n_batch=N_BATCH,
            n_ubatch=N_BATCH,
            seed=SEED,
        )
        self.chat = info.has_chat_template
        self._no_think = info.architecture.startswith("qwen3")
        self._lock = threading.Lock()

    def expand(self, query: str, n: int = 2) -> list[str]:
        """Up to `n` alternative search queries (may be fewer if the model says little)."""
        if n <= 0 or not query.strip():
            return []
        with self._lock:
            try:
                budget = TOKENS_PER_EXPANSION * n + TOKENS_SLACK
                text = self._chat(query, n, budget) if self.chat else self._complete(query, budget)
            except (ValueError, RuntimeError, AssertionError) as exc:
                # template or context errors; llama_cpp asserts on a context it cannot use
                raise ModelError(f"query expansion failed: {exc}") from None
        return parse_expansions(text, query, n)

    def close(self) -> None:
        """Free the model."""
        self.llm.close()

    def _chat(self, query: str, n: int, budget: int) -> str:
        reply = self.llm.create_chat_completion(
            messages=chat_messages(query, n, self._no_think),
            temperature=0.0,
            top_k=1,
            max_tokens=budget,
            seed=SEED,
        )
        return str(reply["choices"][0]["message"]["content"] or "")

    def _complete(self, query: str, budget: int) -> str:
        reply = self.llm.create_completion(
            completion_prompt(query),
            temperature=0.0,
            top_k=1,
            max_tokens=budget,
            stop=["\n\n", "Search query:"],
            seed=SEED,
        )
        return str(reply["choices"][0]["text"])


def load_generator(path: Path, n_threads: int = 2) -> LlamaGenerator:
    """The process-wide generator for `path` (loaded on first call)."""
    return cached(("generate", n_threads), path, lambda: LlamaGenerator(path, n_threads))
