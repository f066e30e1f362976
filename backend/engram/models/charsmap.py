"""SentencePiece's "precompiled charsmap": the normalisation table llama.cpp's UGM tokenizer reads.

The blob is a little-endian uint32 (the trie's size in bytes), a Darts-clone double-array trie
over the UTF-8 bytes of each source text, then the NUL-terminated replacement strings the
trie's leaves point into. The tokenizer replaces the longest matching prefix of its input by its
replacement string. `build` writes one from a plain {source text: replacement} table;
`lookup` walks a blob exactly as llama.cpp does (tests use it to check `build`).

A unit of the double array is a uint32: bits 0-7 the label of the edge into it, bit 8 "has a
value child" (the child under label 0 holds the value), bits 10-30 the offset to its children
(bit 9 scales it by 256), bit 31 set on a value unit, whose low 31 bits are the value.
The children of the unit at position p with offset o sit at (p ^ o) ^ label; no two nodes
share a children base p ^ o, so a unit whose label matches was reached from its own parent.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field

_VALUE_FLAG = 1 << 31
_MAX_DIRECT = 1 << 21  # an offset below this is stored as is; above, it must be a multiple of 256
_MAX_OFFSET = 1 << 29


@dataclass
class _Node:
    children: dict[int, _Node] = field(default_factory=dict)
    value: int | None = None


def build(table: Mapping[str, str]) -> bytes:
    """A precompiled charsmap that replaces each key of `table` by its value (longest match)."""
    strings = bytearray()
    offsets: dict[str, int] = {}
    root = _Node()
    for source in sorted(table):
        raw = source.encode("utf-8")
        if not raw or b"\0" in raw or "\0" in table[source]:
            raise ValueError(f"cannot map {source!r}: empty text or NUL byte")
        target = table[source]
        if target not in offsets:
            offsets[target] = len(strings)
            strings += target.encode("utf-8") + b"\0"
        node = root
        for byte in raw:
            node = node.children.setdefault(byte, _Node())
        node.value = offsets[target]
    units = _place(root)
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(strings)


def _place(root: _Node) -> list[int]:
    """Give every trie node a position such that XOR-addressed children never collide."""
    units: list[int] = [0]
    used = bytearray(1)
    used[0] = 1
    bases: set[int] = set()  # one node per base: the XOR address is then unambiguous
    queue: list[tuple[_Node, int]] = [(root, 0)]
    while queue:
        node, pos = queue.pop()
        labels = sorted(node.children) + ([0] if node.value is not None else [])
        if not labels:
            continue
        free = _next_free(used, 1)  # try each free position for the first label (Darts-clone)
        while True:
            base = free ^ labels[0]
            if base not in bases and _fits(base, labels, pos, used):
                break
            free = _next_free(used, free + 1)
        bases.add(base)
        top = max(base ^ label for label in labels) + 1
        if top > len(used):
            used.extend(bytes(top - len(used)))
            units.extend([0] * (top - len(units)))
        units[pos] |= _encode_offset(pos ^ base)
        for label in labels:
            child_pos = base ^ label
            used[child_pos] = 1
            if label == 0:
                assert node.value is not None
                units[child_pos] = _VALUE_FLAG | node.value
                continue
            child = node.children[label]
            units[child_pos] = (256 if child.value is not None else 0) | label
            queue.append((child, child_pos))
    # llama.cpp refuses an index past the end: every child block (256 units) must be whole
    units.extend([0] * (-len(units) % 256))
    return units


def _next_free(used: bytearray, start: int) -> int:
    found = used.find(0, start)
    return found if found >= 0 else max(start, len(used))


def _fits(base: int, labels: list[int], pos: int, used: bytearray) -> bool:
    offset = pos ^ base
    if offset >= _MAX_DIRECT and (offset % 256 or offset >= _MAX_OFFSET):
        return False
    for label in labels:
        at = base ^ label
        if at == 0 or (at < len(used) and used[at]):
            return False
    return True


def _encode_offset(offset: int) -> int:
    if offset < _MAX_DIRECT:
        return offset << 10
    return (offset << 2) | (1 << 9)


def lookup(charsmap: bytes, text: bytes) -> tuple[int, bytes] | None:
    """(bytes of `text` matched, replacement) for its longest mapped prefix, as llama.cpp does."""
    (size,) = struct.unpack_from("<I", charsmap, 0)
    units = struct.unpack_from(f"<{size // 4}I", charsmap, 4)
    strings = charsmap[4 + size :]

    def base(i: int) -> int:
        return (units[i] >> 10) << ((units[i] & (1 << 9)) >> 6)

    best: tuple[int, bytes] | None = None
    index = base(0)
    for n, byte in enumerate(text, 1):
        index ^= byte
        if index >= len(units) or units[index] & (_VALUE_FLAG | 0xFF) != byte:
            break
        has_value = bool(units[index] & 256)
        index ^= base(index)
        if has_value:
            start = units[index] & (_VALUE_FLAG - 1)
            best = (n, strings[start : strings.index(b"\0", start)])
    return best
