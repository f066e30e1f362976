"""Graph neighbours for the context builder, behind one callable.

`Neighbours(seeds, hops)` returns notes up to `hops` links away from the seed documents,
either direction; the facade builds it on the resolved link graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Neighbour:
    """A note reached from a seed document."""

    doc_id: int
    path: str
    title: str
    hops: int
    seed: int  # the seed document it was reached from


Neighbours = Callable[[Sequence[int], int], list[Neighbour]]
