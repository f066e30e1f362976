"""Rerankers on llama.cpp: BERT-style cross-encoders and LLM yes/no judges.

llama-cpp-python 0.3.36 has no rerank call, so both are driven through the low-level API:
- a cross-encoder (GGUF with RANK pooling: bge-reranker, ms-marco MiniLM) reads the classifier
  output of `[CLS] query [SEP] document [SEP]`, squashed to 0..1;
- a decoder model (Qwen3-Reranker style, architecture other than BERT) is asked whether the
  document meets the query, and the score is P("yes") against P("no") at the answer position.
  The instruction + query prefix is evaluated once per query and kept in the KV cache.
"""

from __future__ import annotations

import ctypes
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import roles
from .ggufinfo import read_info
from .llama import N_BATCH, SequenceDecoder, cached, lib, open_llama, special_layout
from .protocols import ModelError

_POSITIVE = ("yes", "relevant", "true", "positive", "label_1")
_CHATML_PREFIX = (
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query "
    'and the Instruct provided. Note that the answer can only be "yes" or "no".<|im_end|>\n'
    "<|im_start|>user\n<Instruct>: Given a search query, retrieve relevant passages that "
    "answer the query\n<Query>: {query}\n<Document>: "
)
_CHATML_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
_PLAIN_PREFIX = (
    'Judge whether the Document answers the Query. Answer only "yes" or "no".\n'
    "Query: {query}\nDocument: "
)
_PLAIN_SUFFIX = "\nAnswer:"


def load_reranker(path: Path, n_threads: int = 2) -> CrossEncoderReranker | LLMReranker:
    """The process-wide reranker for `path`: cross-encoder or LLM judge, from its metadata."""
    info = read_info(path)
    reason = roles.problem(info.architecture, info.pooling, "rerank", path.name)
    if reason:
        raise ModelError(reason)
    if info.architecture in roles.ENCODER_ARCHS:
        return cached(("rerank-ce", n_threads), path, lambda: CrossEncoderReranker(path, n_threads))
    return cached(("rerank-llm", n_threads), path, lambda: LLMReranker(path, n_threads))


def positive_index(labels: Sequence[str], n_out: int) -> int:
    """Which classifier output means "relevant" (index 1 of an unnamed pair, else 0)."""
    for i, label in enumerate(labels):
        if label.lower() in _POSITIVE:
            return i
    return 1 if n_out == 2 else 0


def to_probability(row: np.ndarray, positive: int) -> float:
    """One logit -> sigmoid; several -> softmax probability of the positive label."""
    if len(row) == 1:
        return 1.0 / (1.0 + math.exp(-float(row[0])))
    shifted = np.exp(row.astype(np.float64) - row.max())
    return float(shifted[positive] / shifted.sum())


class CrossEncoderReranker:
    """A GGUF cross-encoder (RANK pooling): one classifier score per (query, document) pair."""

    def __init__(self, path: Path, n_threads: int = 2, n_batch: int = N_BATCH) -> None:
        info = read_info(path)
        self.model_id = info.model_id
        self.llm = open_llama(
            path,
            n_threads,
            embedding=True,
            n_ctx=n_batch,
            n_batch=n_batch,
            n_ubatch=n_batch,
            flash_attn=True,
            pooling_type=4,
        )
        llama_cpp = lib()
        n_out = max(1, int(llama_cpp.llama_model_n_cls_out(self.llm.model)))
        self._positive = positive_index(info.classifier_labels, n_out)
        self._head, self._tail = special_layout(self.llm)
        vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        # RoBERTa-family pairs read `<s> q </s></s> d </s>`; WordPiece BERT `[CLS] q [SEP] d [SEP]`
        self._mid = [] if info.tokenizer == "bert" else [int(llama_cpp.llama_vocab_sep(vocab))]
        self.max_tokens = min(info.context_length or n_batch, n_batch)
        self._decoder = SequenceDecoder(self.llm, n_batch, n_out)
        self._lock = threading.Lock()

    def pair_tokens(self, query: str, document: str) -> list[int]:
        """`[CLS] query [SEP] document [SEP]`, the document truncated to fit."""
        tok = self.llm.tokenize
        q = list(tok(query.encode("utf-8", "replace"), add_bos=True, special=False))
        if len(q) > self.max_tokens // 2:
            q = q[: self.max_tokens // 2 - self._tail] + q[len(q) - self._tail :]
        d = list(tok(document.encode("utf-8", "replace"), add_bos=True, special=False))[
            self._head :
        ]
        room = self.max_tokens - len(q) - len(self._mid)
        if len(d) > room:
            d = d[: room - self._tail] + d[len(d) - self._tail :]
        return q + self._mid + d

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score in 0..1 per document, in order."""
        if not documents:
            return []
        with self._lock:
            raw = self._decoder.run([self.pair_tokens(query, d) for d in documents])
        return [to_probability(row, self._positive) for row in raw]

    def close(self) -> None:
        """Free the model and its batch."""
        self._decoder.close()
        self.llm.close()


class LLMReranker:
    """A decoder LLM asked "does this document meet the query?"; score = P(yes) vs P(no)."""

    def __init__(self, path: Path, n_threads: int = 2, n_ctx: int = 2048) -> None:
        info = read_info(path)
        self.model_id = info.model_id
        n_ctx = min(n_ctx, info.context_length or n_ctx)
        self.llm = open_llama(
            path, n_threads, n_ctx=n_ctx, n_batch=N_BATCH, n_ubatch=N_BATCH, flash_attn=True
        )
        self._lib = lib()
        self.n_ctx = n_ctx
        chatml = len(self._tokens("<|im_start|>", special=True)) == 1
        self._prefix, self._suffix = (
            (_CHATML_PREFIX, _CHATML_SUFFIX) if chatml else (_PLAIN_PREFIX, _PLAIN_SUFFIX)
        )
        self._yes, self._no = self._answer_token("yes"), self._answer_token("no")
        self._n_vocab = int(
            self._lib.llama_vocab_n_tokens(self._lib.llama_model_get_vocab(self.llm.model))
        )
        self._batch = self._lib.llama_batch_init(N_BATCH, 0, 1)
        self._lock = threading.Lock()

    def _tokens(self, text: str, special: bool = False, bos: bool = False) -> list[int]:
        return list(
            self.llm.tokenize(text.encode("utf-8", "replace"), add_bos=bos, special=special)
        )

    def _answer_token(self, word: str) -> int:
        ids = self._tokens(word)
        if not ids:
            raise ModelError(f"the reranker's vocabulary cannot spell {word!r}")
        return ids[0]

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score in 0..1 per document, in order."""
        if not documents:
            return []
        prefix = self._tokens(self._prefix.format(query=query), special=True, bos=True)
        suffix = self._tokens(self._suffix, special=True)
        prefix = prefix[: self.n_ctx // 2]
        room = self.n_ctx - len(prefix) - len(suffix)
        memory = self._lib.llama_get_memory(self.llm.ctx)
        scores = []
        with self._lock:
            self._lib.llama_memory_clear(memory, True)
            self._decode(prefix, 0, want_logits=False)
            for document in documents:
                self._lib.llama_memory_seq_rm(memory, 0, len(prefix), -1)
                logits = self._decode(self._tokens(document)[:room] + suffix, len(prefix), True)
                yes, no = float(logits[self._yes]), float(logits[self._no])
                scores.append(1.0 / (1.0 + math.exp(no - yes)))
        return scores

    def close(self) -> None:
        """Free the model and its batch."""
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
            self._batch = None
        self.llm.close()

    def _decode(self, tokens: list[int], start: int, want_logits: bool) -> Any:
        L, batch = self._lib, self._batch
        for offset in range(0, len(tokens), N_BATCH):
            part = tokens[offset : offset + N_BATCH]
            last = offset + N_BATCH >= len(tokens)
            for j, token in enumerate(part):
                batch.token[j] = token
                batch.pos[j] = start + offset + j
                batch.n_seq_id[j] = 1
                batch.seq_id[j][0] = 0
                batch.logits[j] = want_logits and last and j == len(part) - 1
            batch.n_tokens = len(part)
            rc = L.llama_decode(self.llm.ctx, batch)
            if rc != 0:
                raise ModelError(f"llama.cpp failed to evaluate the reranker prompt (code {rc})")
        if not want_logits:
            return None
        ptr = L.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(
            ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self._n_vocab,)
        )
