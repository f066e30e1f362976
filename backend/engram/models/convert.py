"""Convert a Hugging Face BERT checkpoint (safetensors) to GGUF with numpy + gguf, no torch.

Handles sentence-transformers embedders (`BertModel` + `1_Pooling/`) and cross-encoder rerankers
(`BertForSequenceClassification`, RANK pooling with the classifier head). The output is
deterministic: the same input folder and dtype always give the same bytes, so a pinned sha256
can check it. llama.cpp's WordPiece tokenizer expects the "phantom space" vocabulary its own
converter writes: a continuation piece `##x` becomes `x`, a bracketed token stays as is, every
other token gets a leading `▁`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .ggufinfo import sha256_file
from .protocols import ModelError

DTYPES = ("f32", "f16", "q8_0")
_POOLING_KEYS = (  # sentence-transformers pooling flag -> gguf PoolingType name
    ("pooling_mode_mean_tokens", "MEAN"),
    ("pooling_mode_cls_token", "CLS"),
    ("pooling_mode_lasttoken", "LAST"),
)
_WORDPIECE_PRE = "jina-v2-en"  # llama.cpp's pre-tokenizer name for BERT WordPiece vocabularies


@dataclass(frozen=True)
class Converted:
    """A written GGUF file and what went into it."""

    path: Path
    sha256: str
    n_tensors: int
    dtype: str
    pooling: str


def convert_bert(
    model_dir: Path, out_path: Path, dtype: str = "f16", name: str | None = None
) -> Converted:
    """Write `model_dir` (config.json, vocab.txt, model.safetensors) as a GGUF at `out_path`."""
    import gguf
    from safetensors.numpy import load_file

    if dtype not in DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    config = _read_json(model_dir / "config.json")
    if config.get("model_type", "bert") != "bert":
        raise ModelError(f"{model_dir} is a {config.get('model_type')!r} model; only BERT converts")
    weights_path = model_dir / "model.safetensors"
    if not weights_path.is_file():
        raise ModelError(f"{weights_path} is missing (only safetensors checkpoints convert)")
    tensors = load_file(str(weights_path))
    is_classifier = any(
        a.endswith("ForSequenceClassification") for a in config.get("architectures") or []
    )
    pooling = "RANK" if is_classifier else _pooling(model_dir)
    tokens, token_types = _vocab(model_dir)
    n_layer = int(config["num_hidden_layers"])

    shape = BertShape(
        name=name or model_dir.name,
        file_type={
            "f32": gguf.LlamaFileType.ALL_F32,
            "f16": gguf.LlamaFileType.MOSTLY_F16,
            "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
        }[dtype],
        context_length=int(config.get("max_position_embeddings", 512)),
        embedding_length=int(config["hidden_size"]),
        feed_forward_length=int(config["intermediate_size"]),
        block_count=n_layer,
        head_count=int(config["num_attention_heads"]),
        layer_norm_eps=float(config.get("layer_norm_eps", 1e-12)),
        pooling=pooling,
    )

    def fill(writer: Any) -> int:
        if is_classifier:
            labels = config.get("id2label") or {"0": "LABEL_0"}
            writer.add_classifier_output_labels([labels[k] for k in sorted(labels, key=int)])
        _add_tokenizer(writer, model_dir, config, tokens, token_types)
        return _add_tensors(writer, tensors, n_layer, dtype, is_classifier)

    n_tensors = write_bert(out_path, shape, fill)
    return Converted(out_path, sha256_file(out_path), n_tensors, dtype, pooling.lower())


@dataclass(frozen=True)
class BertShape:
    """The hyperparameters of a BERT encoder as a GGUF header gives them."""

    name: str
    file_type: int  # gguf.LlamaFileType
    context_length: int
    embedding_length: int
    feed_forward_length: int
    block_count: int
    head_count: int
    layer_norm_eps: float
    pooling: str  # a gguf.PoolingType name: "MEAN", "CLS", "RANK", ...


def write_bert(out_path: Path, shape: BertShape, fill: Callable[[Any], int]) -> int:
    """Write a BERT GGUF at `out_path` (a temporary file renamed into place, never half a
    file): the header from `shape`, then `fill(writer)` adds the tokenizer, any other keys and
    the tensors, and returns how many tensors it added."""
    import gguf

    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    writer = gguf.GGUFWriter(str(tmp), "bert")
    try:
        writer.add_name(shape.name)
        writer.add_file_type(shape.file_type)
        writer.add_context_length(shape.context_length)
        writer.add_embedding_length(shape.embedding_length)
        writer.add_feed_forward_length(shape.feed_forward_length)
        writer.add_block_count(shape.block_count)
        writer.add_head_count(shape.head_count)
        writer.add_layer_norm_eps(shape.layer_norm_eps)
        writer.add_causal_attention(False)
        writer.add_pooling_type(gguf.PoolingType[shape.pooling])
        n_tensors = fill(writer)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        os.replace(tmp, out_path)
    finally:
        writer.close()
        tmp.unlink(missing_ok=True)
    return n_tensors


def _add_tokenizer(
    writer: Any, model_dir: Path, config: dict[str, Any], tokens: list[str], token_types: list[int]
) -> None:
    """The WordPiece vocabulary and its settings, the longest input and the prompts."""
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre(_WORDPIECE_PRE)
    writer.add_token_list(tokens)
    writer.add_token_types(token_types)
    writer.add_token_type_count(int(config.get("type_vocab_size", 2)))
    writer.add_bool("tokenizer.ggml.normalizer.lowercase", _lowercase(model_dir))
    _add_special_vocab(writer, model_dir, len(tokens))
    max_seq = _read_json(model_dir / "sentence_bert_config.json", required=False).get(
        "max_seq_length"
    )
    if max_seq:
        writer.add_uint32("engram.max_seq_length", int(max_seq))
    for key, text in _prompts(model_dir).items():
        writer.add_string(f"engram.prompt.{key}", text)


def _add_tensors(
    writer: Any, tensors: dict[str, np.ndarray], n_layer: int, dtype: str, is_classifier: bool
) -> int:
    import gguf

    name_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_layer)
    keep_f32 = ("position_embd.", "token_types.")  # llama.cpp keeps these unquantized
    count = 0
    for hf_name in sorted(tensors):
        name = _gguf_name(hf_name, name_map, is_classifier)
        if name is None:
            continue
        data = tensors[hf_name].astype(np.float32)
        if data.ndim == 1 or dtype == "f32" or name.startswith(keep_f32):
            writer.add_tensor(name, data)
        elif dtype == "q8_0" and data.shape[-1] % 32 == 0:
            q8 = gguf.GGMLQuantizationType.Q8_0
            writer.add_tensor(name, gguf.quants.quantize(data, q8), raw_dtype=q8)
        else:
            writer.add_tensor(name, data.astype(np.float16))
        count += 1
    return count


def _gguf_name(hf_name: str, name_map: Any, is_classifier: bool) -> str | None:
    name = hf_name.removeprefix("bert.")
    if name.endswith("position_ids"):
        return None
    suffix = "." + name.rsplit(".", 1)[-1]
    if name.startswith("pooler."):  # the cross-encoder's dense+tanh head; embedders drop it
        return "cls" + suffix if is_classifier else None
    if name.startswith("classifier."):
        return "cls.output" + suffix if is_classifier else None
    mapped = name_map.get_name(name, try_suffixes=(".weight", ".bias"))
    if mapped is None:
        raise ModelError(f"unexpected tensor {hf_name!r}: not a BERT checkpoint this converts")
    return str(mapped)


def _add_special_vocab(writer: Any, model_dir: Path, n_vocab: int) -> None:
    """gguf's SpecialVocab, without its warning about the CLS id (llama.cpp uses BOS for it)."""
    import gguf

    vocab_logger = logging.getLogger("gguf.vocab")
    level = vocab_logger.level
    vocab_logger.setLevel(logging.ERROR)
    try:
        gguf.SpecialVocab(model_dir, n_vocab=n_vocab).add_to_gguf(writer, quiet=True)
    finally:
        vocab_logger.setLevel(level)


def _vocab(model_dir: Path) -> tuple[list[str], list[int]]:
    vocab_file = model_dir / "vocab.txt"
    if not vocab_file.is_file():
        raise ModelError(f"{vocab_file} is missing (WordPiece vocabulary)")
    pieces = vocab_file.read_text(encoding="utf-8").split("\n")
    if pieces and pieces[-1] == "":
        pieces.pop()
    special = _special_tokens(model_dir)
    tokens: list[str] = []
    types: list[int] = []
    for piece in pieces:
        if piece in special:
            tokens.append(piece)
            types.append(3)  # CONTROL
            continue
        types.append(1)  # NORMAL
        if piece.startswith("[") and piece.endswith("]"):
            tokens.append(piece)
        elif piece.startswith("##"):
            tokens.append(piece[2:])
        else:
            tokens.append("\u2581" + piece)
    return tokens, types


def _special_tokens(model_dir: Path) -> set[str]:
    tok = _read_json(model_dir / "tokenizer.json", required=False)
    special = {t["content"] for t in tok.get("added_tokens", []) if t.get("special")}
    mapping = _read_json(model_dir / "special_tokens_map.json", required=False)
    for value in mapping.values():
        special.add(value["content"] if isinstance(value, dict) else str(value))
    return special


def _pooling(model_dir: Path) -> str:
    config = _read_json(model_dir / "1_Pooling" / "config.json", required=False)
    for key, pooling in _POOLING_KEYS:
        if config.get(key):
            return pooling
    if config:
        raise ModelError(f"{model_dir}/1_Pooling/config.json asks for a pooling llama.cpp lacks")
    return "MEAN"  # no sentence-transformers config: mean pooling is the common default


def _lowercase(model_dir: Path) -> bool:
    tok = _read_json(model_dir / "tokenizer.json", required=False)
    normalizer = tok.get("normalizer") or {}
    if "lowercase" in normalizer:
        return bool(normalizer["lowercase"])
    return bool(
        _read_json(model_dir / "tokenizer_config.json", required=False).get("do_lower_case", True)
    )


def _prompts(model_dir: Path) -> dict[str, str]:
    prompts = (
        _read_json(model_dir / "config_sentence_transformers.json", required=False).get("prompts")
        or {}
    )
    found = {
        "query": prompts.get("query", ""),
        "document": prompts.get("document", prompts.get("passage", "")),
    }
    return {k: str(v) for k, v in found.items() if v}


def _read_json(path: Path, required: bool = True) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if required:
            raise ModelError(f"{path} is missing") from None
        return {}
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from None
    return data if isinstance(data, dict) else {}
