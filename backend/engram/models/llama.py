"""llama.cpp through llama-cpp-python: loading, the embedder, batched decoding, build checks.

This is the only module that imports `llama_cpp`, and only inside functions, so importing
`engram.models` stays cheap. The rerankers and the generator (`llama_rerank.py`,
`llama_generate.py`) reach the library through `lib()` and the helpers here.
Models load once per process: `load_embedder` & co. cache by path, file mtime and parameters.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from . import roles
from .ggufinfo import read_info
from .protocols import GGUFInfo, ModelError, Vector

T = TypeVar("T")
N_BATCH = 512  # larger batches collapse BERT throughput on CPU (MODELS.md)
# A query longer than the model's window is embedded window by window: a pasted page is read
# whole, a pasted book is not (8 windows of MiniLM's 256 tokens: about 1,500 words).
MAX_QUERY_WINDOWS = 8
# Characters of a query read at all: far more than 8 windows of text hold, so tokenizing a
# pasted book costs no more than tokenizing what is embedded of it.
MAX_QUERY_CHARS_PER_TOKEN = 16
# Tokens of several sequences packed into one decode. Attention spans the whole batch (masked
# per sequence), so its cost grows with the square of the packed length: SciFact passages
# packed up to 256 tokens cost ~8% less CPU than packed up to 512 (docs/benchmarks.md), while
# short passages still share a decode.
PACK_TOKENS = 256
_CACHE: dict[tuple[Any, ...], Any] = {}
_CACHE_LOCK = threading.Lock()
_POOLING_IDS = {"none": 0, "mean": 1, "cls": 2, "last": 3, "rank": 4}


def lib() -> Any:
    """The llama_cpp module, imported on first use, with its log output limited to errors."""
    # llama.cpp's OpenMP threads meet at a barrier after every operation. Spinning there (the
    # OpenMP default) burns the time slice a preempted partner needs: on a busy machine two
    # spinning threads embedded at a fifth to two fifths of one thread's rate, two passive ones
    # at twice it (docs/benchmarks.md). libgomp reads it when llama.cpp loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp

    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
    return llama_cpp


@dataclass(frozen=True)
class SystemInfo:
    """llama.cpp's build report; `amx_build` means quantized models will crash (MODELS.md)."""

    text: str
    features: tuple[tuple[str, str], ...]
    amx_build: bool
    version: str = ""


def system_info() -> SystemInfo:
    """What `engram doctor` shows about the llama.cpp build."""
    text = lib().llama_print_system_info().decode("utf-8", "replace").strip()
    features = tuple(
        (k.strip(), v.strip()) for k, v in re.findall(r"([A-Za-z0-9_ ]+?) = (\w+)", text)
    )
    amx = any(k.startswith("AMX") and v not in ("0", "") for k, v in features)
    return SystemInfo(text, features, amx, str(getattr(lib(), "__version__", "")))


def cached(key: tuple[Any, ...], path: Path, factory: Callable[[], T]) -> T:
    """One instance per (key, file, mtime) for the whole process."""
    try:
        full_key = (*key, str(path.resolve()), path.stat().st_mtime_ns)
    except OSError:
        raise ModelError(f"model file {path} does not exist") from None
    with _CACHE_LOCK:
        if full_key not in _CACHE:
            if not _CACHE:
                atexit.register(close_all)
            _CACHE[full_key] = factory()
        return _CACHE[full_key]


def close_all() -> None:
    """Free every cached model (runs at exit, before llama_cpp's module state is torn down)."""
    with _CACHE_LOCK:
        models = list(_CACHE.values())
        _CACHE.clear()
    for model in models:
        model.close()


def open_llama(path: Path, n_threads: int, **params: Any) -> Any:
    """A quiet `llama_cpp.Llama` on `path`, or a ModelError that says why it failed."""
    llama_cpp = lib()
    if not path.is_file():
        raise ModelError(f"model file {path} does not exist")
    try:
        return llama_cpp.Llama(
            model_path=str(path),
            n_threads=n_threads,
            n_threads_batch=n_threads,
            verbose=False,
            **params,
        )
    except (ValueError, RuntimeError) as exc:
        raise ModelError(
            f"llama.cpp could not load {path.name}: {exc} "
            "(is it a complete GGUF file for a supported architecture?)"
        ) from None


class SequenceDecoder:
    """Packs token sequences into llama.cpp batches and reads one pooled vector per sequence."""

    def __init__(self, llm: Any, n_batch: int, n_out: int) -> None:
        self.llm, self.n_batch, self.n_out = llm, n_batch, n_out
        self._lib = lib()
        self._batch = self._lib.llama_batch_init(n_batch, 0, 1)
        self._n_seq_max = max(1, int(self._lib.llama_n_seq_max(llm.ctx)))
        self.pack_tokens = min(n_batch, PACK_TOKENS)

    def run(self, seqs: Sequence[Sequence[int]]) -> np.ndarray:
        """float32 [len(seqs), n_out]; every sequence must fit in one batch."""
        out = np.zeros((len(seqs), self.n_out), dtype=np.float32)
        for group in self._pack(seqs):
            self._decode(group, seqs, out)
        return out

    def _pack(self, seqs: Sequence[Sequence[int]]) -> list[list[int]]:
        """First-fit decreasing into batches of at most PACK_TOKENS tokens (a longer sequence
        gets a batch of its own): fewer, fuller batches than packing in input order."""
        budget = self.pack_tokens
        bins: list[tuple[int, list[int]]] = []
        for i in sorted(range(len(seqs)), key=lambda i: -len(seqs[i])):
            size = len(seqs[i])
            for b, (used, members) in enumerate(bins):
                if used + size <= budget and len(members) < self._n_seq_max:
                    members.append(i)
                    bins[b] = (used + size, members)
                    break
            else:
                bins.append((size, [i]))
        return [members for _, members in bins]

    def _decode(self, group: list[int], seqs: Sequence[Sequence[int]], out: np.ndarray) -> None:
        L, batch = self._lib, self._batch
        j = 0
        for seq_id, i in enumerate(group):
            for pos, token in enumerate(seqs[i]):
                batch.token[j] = token
                batch.pos[j] = pos
                batch.n_seq_id[j] = 1
                batch.seq_id[j][0] = seq_id
                batch.logits[j] = True
                j += 1
        batch.n_tokens = j
        memory = L.llama_get_memory(self.llm.ctx)
        if memory:
            L.llama_memory_clear(memory, True)
        rc = L.llama_decode(self.llm.ctx, batch)
        if rc != 0:
            raise ModelError(f"llama.cpp failed to evaluate a batch (code {rc})")
        for seq_id, i in enumerate(group):
            ptr = L.llama_get_embeddings_seq(self.llm.ctx, seq_id)
            if not ptr:
                raise ModelError("llama.cpp returned no pooled output (unsupported pooling?)")
            out[i] = np.ctypeslib.as_array(
                ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.n_out,)
            )

    def close(self) -> None:
        """Free the batch buffer."""
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
            self._batch = None


def special_layout(llm: Any) -> tuple[int, int]:
    """How many special tokens tokenization adds before and after the text ([CLS] .. [SEP])."""
    plain = llm.tokenize(b"hello", add_bos=False, special=False)
    full = llm.tokenize(b"hello", add_bos=True, special=False)
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return start, len(full) - start - len(plain)
    return 0, 0


class LlamaEmbedder:
    """An embedding GGUF (BERT-family or decoder) with MEAN/CLS/LAST pooling."""

    def __init__(
        self, path: Path, n_threads: int = 2, max_tokens: int | None = None, n_batch: int = N_BATCH
    ) -> None:
        info = read_info(path)
        reason = roles.problem(info.architecture, info.pooling, "embed", path.name)
        if reason:
            raise ModelError(reason)
        self.info: GGUFInfo = info
        self.llm = open_llama(
            path,
            n_threads,
            embedding=True,
            n_ctx=n_batch,
            n_batch=n_batch,
            n_ubatch=n_batch,
            flash_attn=True,
            pooling_type=_POOLING_IDS.get(info.pooling, 1) or 1,
        )
        self.model_id = info.model_id
        self.dim = int(self.llm.n_embd())
        limit = max_tokens or info.max_seq_length or info.context_length or n_batch
        self.max_tokens = min(limit, n_batch)
        self.prompts = info.prompts
        self._head, self._tail = special_layout(self.llm)
        self._prefix_tokens = (
            self.count_tokens(self.prompts.document) if self.prompts.document else 0
        )
        self._query_prefix: list[int] = (
            list(self.llm.tokenize(_utf8(self.prompts.query), add_bos=False, special=False))
            if self.prompts.query
            else []
        )
        self._decoder = SequenceDecoder(self.llm, n_batch, self.dim)
        self._lock = threading.Lock()

    @property
    def max_text_tokens(self) -> int:
        """Largest `count_tokens(document text)` that embeds without truncation."""
        return self.max_tokens - self._head - self._tail - self._prefix_tokens

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` alone (no special tokens, no prefix)."""
        return len(self.llm.tokenize(_utf8(text), add_bos=False, special=False))

    def tokenize(self, text: str) -> list[int]:
        """Token ids of `text` as the model sees it (with its special tokens), untruncated."""
        return list(self.llm.tokenize(_utf8(text), add_bos=True, special=False))

    def detokenize(self, tokens: Sequence[int]) -> str:
        """Text of token ids (special tokens dropped)."""
        return str(self.llm.detokenize(list(tokens)).decode("utf-8", "replace"))

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """One normalized vector per text, in order; over-long texts are truncated."""
        prefix = self.prompts.document
        return self._embed([prefix + t for t in texts]).tolist()

    def embed_query(self, text: str) -> Vector:
        """The normalized vector of a query, with the model's query prefix applied; a query
        longer than the model's window is read whole, in windows (`query_windows`) pooled
        together."""
        text = text[: MAX_QUERY_WINDOWS * self.max_tokens * MAX_QUERY_CHARS_PER_TOKEN]
        with self._lock:
            windows = self.query_windows(self.tokenize(self.prompts.query + text))
            pooled = self._decoder.run(windows)
        return _unit(_combine(pooled, windows)).tolist()

    def query_windows(self, tokens: list[int]) -> list[list[int]]:
        """The token sequences a query is embedded from: itself when it fits the model's
        window, else consecutive windows each holding the special tokens and the query prefix
        (a text truncated to its first window loses what a long query says last)."""
        if len(tokens) <= self.max_tokens:
            return [tokens or [0]]
        head_len, prefix = self._head, self._query_prefix
        if prefix and tokens[head_len : head_len + len(prefix)] == prefix:
            head_len += len(prefix)  # every window starts like the model's queries do
        head, tail = tokens[:head_len], tokens[len(tokens) - self._tail :] if self._tail else []
        body = tokens[head_len : len(tokens) - len(tail)]
        width = max(1, self.max_tokens - len(head) - len(tail))
        starts = range(0, min(len(body), width * MAX_QUERY_WINDOWS), width)
        return [head + body[i : i + width] + tail for i in starts]

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            seqs = [self._truncate(self.tokenize(t)) for t in texts]
            vectors = self._decoder.run(seqs)
        return _unit(vectors)

    def _truncate(self, tokens: list[int]) -> list[int]:
        if not tokens:
            return [0]
        if len(tokens) <= self.max_tokens:
            return tokens
        tail = tokens[len(tokens) - self._tail :] if self._tail else []
        return tokens[: self.max_tokens - len(tail)] + tail

    def close(self) -> None:
        """Free the model (cached instances are freed by `close_all` at exit instead)."""
        self._decoder.close()
        self.llm.close()


def load_embedder(
    path: Path, n_threads: int = 2, max_tokens: int | None = None, context: str = "main"
) -> LlamaEmbedder:
    """The process-wide embedder for `path` (loaded on first call). Each `context` name gets its
    own llama.cpp context and lock, so a query never waits behind another context's batch."""
    return cached(
        ("embed", context, n_threads, max_tokens),
        path,
        lambda: LlamaEmbedder(path, n_threads, max_tokens),
    )


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows (or one vector) scaled to unit length; a zero vector stays zero."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def _combine(pooled: np.ndarray, windows: Sequence[Sequence[int]]) -> np.ndarray:
    """One query vector from its windows' mean-pooled vectors, weighted by their lengths: the
    mean over all the query's tokens, as MEAN pooling over a longer window would give. (On
    ArguAna's long queries this measured above averaging the windows' unit vectors, which
    lets a short last window count as much as a full one.)"""
    weights = np.asarray([len(w) for w in windows], dtype=np.float32)
    return (pooled * weights[:, None]).sum(axis=0) / weights.sum()


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "replace")
