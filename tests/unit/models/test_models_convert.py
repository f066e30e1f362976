"""The safetensors -> GGUF converter and the GGUF header reader."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
import pytest
from engram.models.convert import convert_bert
from engram.models.ggufinfo import prompts_for, read_header, read_info
from engram.models.protocols import ModelError

from tests.fixtures.tiny_gguf import bert_vocab, tiny_bert_dir


def test_conversion_is_deterministic(tmp_path: Path) -> None:
    folder = tiny_bert_dir(tmp_path / "bert")
    a = convert_bert(folder, tmp_path / "a.gguf")
    b = convert_bert(folder, tmp_path / "b.gguf")
    assert a.sha256 == b.sha256
    assert a.path.read_bytes() == b.path.read_bytes()
    assert not list(tmp_path.glob(".*.tmp"))  # the temp file was renamed, not left behind


def test_embedder_metadata_and_tensors(tmp_path: Path, tiny) -> None:
    info = read_info(tiny.embed)
    assert (info.architecture, info.pooling, info.tokenizer) == ("bert", "mean", "bert")
    assert (info.embedding_length, info.block_count, info.context_length) == (64, 2, 512)
    assert info.max_seq_length == 64
    assert info.vocab_size == len(bert_vocab())
    assert info.file_type == "F16"
    assert info.model_id.startswith("embed@") and info.sha256.startswith(info.model_id[6:])
    reader = gguf.GGUFReader(str(tiny.embed))
    fields = {name: f.contents() for name, f in reader.fields.items()}
    assert fields["tokenizer.ggml.pre"] == "jina-v2-en"
    assert fields["tokenizer.ggml.normalizer.lowercase"] is True
    assert fields["bert.attention.causal"] is False
    tokens = fields["tokenizer.ggml.tokens"]
    assert len(set(tokens)) == len(tokens)
    assert tokens[:3] == ["[PAD]", "[UNK]", "[CLS]"]
    assert "\u2581cat" in tokens and "ing" in tokens and "##ing" not in tokens
    types = fields["tokenizer.ggml.token_type"]
    assert types[:5] == [3] * 5 and types[5] == 1  # specials are CONTROL, pieces NORMAL
    names = {t.name: t for t in reader.tensors}
    assert "blk.1.ffn_down.weight" in names and "token_embd_norm.bias" in names
    assert not any(n.startswith(("cls", "pooler")) for n in names)  # embedders drop the pooler
    assert names["position_embd.weight"].tensor_type == gguf.GGMLQuantizationType.F32
    assert names["blk.0.attn_q.weight"].tensor_type == gguf.GGMLQuantizationType.F16


def test_quantized_and_reranker_layouts(tiny) -> None:
    q8 = {t.name: t.tensor_type for t in gguf.GGUFReader(str(tiny.embed_q8)).tensors}
    assert q8["blk.0.attn_q.weight"] == gguf.GGMLQuantizationType.Q8_0
    assert q8["token_types.weight"] == gguf.GGMLQuantizationType.F32
    assert read_info(tiny.embed_q8).file_type == "Q8_0"
    info = read_info(tiny.rerank)
    assert info.pooling == "rank" and info.classifier_labels == ("LABEL_0",)
    names = {t.name for t in gguf.GGUFReader(str(tiny.rerank)).tensors}
    assert {"cls.weight", "cls.bias", "cls.output.weight", "cls.output.bias"} <= names


def test_prompts_come_from_sentence_transformers_config(tiny) -> None:
    prompts = read_info(tiny.embed_prompted).prompts
    assert (prompts.query, prompts.document) == ("query: ", "passage: ")


@pytest.mark.parametrize(
    ("name", "query", "document"),
    [
        ("nomic-embed-text-v1.5", "search_query: ", "search_document: "),
        ("embeddinggemma-300m", "task: search result | query: ", "title: none | text: "),
        ("multilingual-e5-small", "query: ", "passage: "),
        ("bge-small-en-v1.5", "Represent this sentence for searching relevant passages: ", ""),
        ("all-MiniLM-L6-v2", "", ""),
    ],
)
def test_known_prompt_table(name: str, query: str, document: str) -> None:
    prompts = prompts_for(name, f"{name}.Q8_0.gguf")
    assert (prompts.query, prompts.document) == (query, document)


def test_metadata_prompts_win_over_the_table() -> None:
    assert prompts_for("nomic-embed-text", "x.gguf", "", "doc: ").query == ""


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: (d / "model.safetensors").unlink(), "model.safetensors"),
        (lambda d: (d / "vocab.txt").unlink(), "vocab.txt"),
        (
            lambda d: (d / "config.json").write_text(json.dumps({"model_type": "llama"})),
            "only BERT",
        ),
        (lambda d: (d / "config.json").write_text("{oops"), "cannot read"),
    ],
)
def test_bad_checkpoints_raise_model_error(tmp_path: Path, setup, message: str) -> None:
    folder = tiny_bert_dir(tmp_path / "bert")
    setup(folder)
    with pytest.raises(ModelError, match=message):
        convert_bert(folder, tmp_path / "out.gguf")
    assert not (tmp_path / "out.gguf").exists()


def test_unknown_dtype(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="dtype"):
        convert_bert(tiny_bert_dir(tmp_path / "b"), tmp_path / "o.gguf", dtype="q4_k")


def test_header_reader_matches_gguf_reader(tiny) -> None:
    meta, types = read_header(tiny.rerank)
    reader = gguf.GGUFReader(str(tiny.rerank))
    assert len(types) == len(reader.tensors)
    assert meta["general.architecture"] == "bert"
    assert meta["tokenizer.ggml.tokens"] == len(reader.fields["tokenizer.ggml.tokens"].data)
    assert meta["bert.classifier.output_labels"] == ["LABEL_0"]


@pytest.mark.parametrize(
    "content", [b"", b"GGUF", b"not a gguf file at all", b"GGUF\x03\x00\x00\x00"]
)
def test_broken_files_raise_model_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(content)
    with pytest.raises(ModelError):
        read_info(path)


def test_truncated_gguf_is_reported(tmp_path: Path, tiny) -> None:
    path = tmp_path / "cut.gguf"
    path.write_bytes(tiny.embed.read_bytes()[:2000])
    with pytest.raises(ModelError, match="not a readable GGUF"):
        read_info(path)
    assert np.isfinite(read_info(tiny.embed).size_bytes)
