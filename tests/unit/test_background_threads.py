"""How many llama.cpp threads the daemon's background embedding takes."""

from __future__ import annotations

import os

import pytest

from engram.config import background_threads


@pytest.mark.parametrize(
    ("cores", "n_threads", "expected"),
    [
        (1, 1, 1),
        (2, 2, 2),  # two cores: both (the low priority yields them)
        (4, 4, 3),  # more: one core left free
        (4, 2, 2),  # never more than configured
        (16, 8, 8),
        (3, 8, 2),
    ],
)
def test_a_core_is_left_free_only_on_machines_with_more_than_two(
    monkeypatch: pytest.MonkeyPatch, cores: int, n_threads: int, expected: int
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)), raising=False)
    assert background_threads(n_threads) == expected
