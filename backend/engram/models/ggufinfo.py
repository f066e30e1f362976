"""Read what a GGUF file says about itself (no llama.cpp needed), and hash files."""

from __future__ import annotations

import hashlib
import mmap
import struct
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from .protocols import GGUFInfo, ModelError, Prompts

_POOLING = {0: "none", 1: "mean", 2: "cls", 3: "last", 4: "rank"}
_SHA_MEMO: dict[tuple[str, int, int], str] = {}
_SHA_LOCK = threading.Lock()

# Prefixes published with well-known embedding models, matched on the GGUF's name.
# (name fragment, query prefix, document prefix); first match wins.
KNOWN_PROMPTS: tuple[tuple[str, str, str], ...] = (
    ("nomic-embed", "search_query: ", "search_document: "),
    ("embeddinggemma", "task: search result | query: ", "title: none | text: "),
    ("multilingual-e5", "query: ", "passage: "),
    ("e5-", "query: ", "passage: "),
    ("bge-small-en", "Represent this sentence for searching relevant passages: ", ""),
    ("bge-base-en", "Represent this sentence for searching relevant passages: ", ""),
    ("bge-large-en", "Represent this sentence for searching relevant passages: ", ""),
    ("mxbai-embed", "Represent this sentence for searching relevant passages: ", ""),
    (
        "qwen3-embedding",
        "Instruct: Given a web search query, retrieve relevant passages that answer the query\n"
        "Query: ",
        "",
    ),
)


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, remembered per (path, size, mtime) for this process."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _SHA_LOCK:
        if key in _SHA_MEMO:
            return _SHA_MEMO[key]
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    with _SHA_LOCK:
        _SHA_MEMO[key] = digest.hexdigest()
    return digest.hexdigest()


def read_kind(path: Path) -> tuple[str, str]:
    """(architecture, pooling) from the header alone: cheap even for a large model."""
    meta, _ = _checked_header(path)
    arch = str(meta.get("general.architecture", "unknown"))
    return arch, _pooling(meta, arch)


def read_info(path: Path) -> GGUFInfo:
    """Metadata of a GGUF file: architecture, sizes, pooling, quantization, tokenizer."""
    meta, tensor_types = _checked_header(path)
    arch = str(meta.get("general.architecture", "unknown"))
    name = str(meta.get("general.name") or path.stem)
    return GGUFInfo(
        path=path,
        size_bytes=path.stat().st_size,
        sha256=sha256_file(path),
        architecture=arch,
        name=name,
        file_type=_file_type(meta.get("general.file_type"), tensor_types),
        context_length=int(meta.get(f"{arch}.context_length", 0)),
        max_seq_length=int(meta.get("engram.max_seq_length", 0)),
        embedding_length=int(meta.get(f"{arch}.embedding_length", 0)),
        block_count=int(meta.get(f"{arch}.block_count", 0)),
        pooling=_pooling(meta, arch),
        tokenizer=str(meta.get("tokenizer.ggml.model", "")),
        vocab_size=int(meta.get("tokenizer.ggml.tokens", 0)),
        n_tensors=len(tensor_types),
        classifier_labels=tuple(str(x) for x in meta.get(f"{arch}.classifier.output_labels", ())),
        has_chat_template="tokenizer.chat_template" in meta,
        prompts=prompts_for(
            name, path.name, meta.get("engram.prompt.query"), meta.get("engram.prompt.document")
        ),
    )


def _checked_header(path: Path) -> tuple[dict[str, Any], list[int]]:
    try:
        return read_header(path)
    except FileNotFoundError:
        raise ModelError(f"model file {path} does not exist") from None
    except (OSError, ValueError, struct.error) as exc:
        raise ModelError(f"{path} is not a readable GGUF file ({exc})") from None


def _pooling(meta: dict[str, Any], arch: str) -> str:
    pooling = meta.get(f"{arch}.pooling_type")
    return _POOLING.get(int(pooling), "unspecified") if pooling is not None else "unspecified"


# GGUF value types -> struct format (8 = string, 9 = array)
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}


def read_header(path: Path) -> tuple[dict[str, Any], list[int]]:
    """(metadata, tensor types) from a GGUF header; big arrays become their length.

    gguf's GGUFReader builds every token string (seconds for a 150k vocabulary); this reads
    only what `info` needs and skips arrays of strings by their lengths.
    """
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != b"GGUF":
            raise ValueError("no GGUF magic")
        version, n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
        if version < 2:
            raise ValueError(f"GGUF version {version} is too old")
        pos = 24
        meta: dict[str, Any] = {}
        for _ in range(n_kv):
            key, pos = _string(buf, pos)
            (vtype,) = struct.unpack_from("<I", buf, pos)
            meta[key], pos = _value(buf, pos + 4, vtype, keep=key.endswith("output_labels"))
        types = []
        for _ in range(n_tensors):
            _, pos = _string(buf, pos)
            (n_dims,) = struct.unpack_from("<I", buf, pos)
            pos += 4 + 8 * n_dims
            (ttype,) = struct.unpack_from("<I", buf, pos)
            types.append(ttype if n_dims > 1 else -1)
            pos += 12
    return meta, types


def _string(buf: Any, pos: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", buf, pos)
    end = pos + 8 + length
    if end > len(buf):
        raise ValueError("truncated string")
    return bytes(buf[pos + 8 : end]).decode("utf-8", "replace"), end


def _value(buf: Any, pos: int, vtype: int, keep: bool = False) -> tuple[Any, int]:
    if vtype == 8:
        return _string(buf, pos)
    if vtype in _SCALARS:
        fmt = "<" + _SCALARS[vtype]
        return struct.unpack_from(fmt, buf, pos)[0], pos + struct.calcsize(fmt)
    if vtype != 9:
        raise ValueError(f"unknown GGUF value type {vtype}")
    item_type, count = struct.unpack_from("<IQ", buf, pos)
    pos += 12
    if item_type in _SCALARS and not keep:
        return count, pos + count * struct.calcsize("<" + _SCALARS[item_type])
    items = []
    for _ in range(count):
        item, pos = _value(buf, pos, item_type)
        if keep:
            items.append(item)
    return (items if keep else count), pos


def prompts_for(name: str, filename: str, query: Any = None, document: Any = None) -> Prompts:
    """The model's query/document prefixes: from its own metadata, else the known table."""
    if query is not None or document is not None:
        return Prompts(str(query or ""), str(document or ""))
    haystack = f"{name} {filename}".lower()
    for fragment, q, d in KNOWN_PROMPTS:
        if fragment in haystack:
            return Prompts(q, d)
    return Prompts()


def _file_type(value: Any, tensor_types: list[int]) -> str:
    import gguf

    if value is not None:
        try:
            return gguf.LlamaFileType(int(value)).name.removeprefix("MOSTLY_").removeprefix("ALL_")
        except ValueError:
            pass
    counts = Counter(t for t in tensor_types if t >= 0)
    if not counts:
        return "unknown"
    dominant = counts.most_common(1)[0][0]
    try:
        return gguf.GGMLQuantizationType(dominant).name
    except ValueError:
        return f"type{dominant}"
