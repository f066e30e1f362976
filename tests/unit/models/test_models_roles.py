"""Which GGUF may serve which role, from its header alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.models import roles
from engram.models.protocols import ModelError


@pytest.mark.parametrize(
    ("arch", "pooling", "role", "reason"),
    [
        ("bert", "mean", "embed", None),
        ("qwen3", "last", "embed", None),  # decoder embedding models exist
        ("bert", "rank", "embed", "is a reranker"),
        ("bert", "rank", "rerank", None),
        ("qwen3", "unspecified", "rerank", None),  # an LLM yes/no judge
        ("bert", "mean", "rerank", "is an embedding model"),
        ("xlm-roberta", "cls", "rerank", "is an embedding model"),
        ("llama", "unspecified", "generate", None),
        ("bert", "mean", "generate", "is an encoder model"),
        ("nomic-bert", "mean", "generate", "is an encoder model"),
    ],
)
def test_problem(arch: str, pooling: str, role: str, reason: str | None) -> None:
    got = roles.problem(arch, pooling, role, "m.gguf")
    assert (got is None) if reason is None else (got is not None and reason in got)


def test_check_reads_only_the_header(tmp_path: Path, tiny) -> None:  # type: ignore[no-untyped-def]
    roles.check(tiny.embed, "embed")
    roles.check(tiny.rerank, "rerank")
    roles.check(tiny.chat, "generate")
    with pytest.raises(ModelError, match="not a text generator"):
        roles.check(tiny.embed, "generate")
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelError, match="not a readable GGUF file"):
        roles.check(junk, "rerank")
    with pytest.raises(ModelError, match="does not exist"):
        roles.check(tmp_path / "nope.gguf", "rerank")
