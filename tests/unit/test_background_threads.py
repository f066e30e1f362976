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


def test_a_job_yields_to_a_waiting_write_after_its_batches_or_its_slice() -> None:
    """Writes back to back let the job commit 1, 2, 4 … 16 batches between them, but never
    hold a write longer than a slice; nothing yields before a commit or after the last."""
    from engram.server.jobs import MAX_STREAK, SLICE_SECONDS, yields

    assert not yields(5, 10, 0, 0, 9.0)  # nothing committed since the start: no progress yet
    assert not yields(10, 10, 3, 0, 9.0)  # the phase is done: let it end
    assert yields(5, 10, 1, 0, 0.0)
    assert not yields(5, 10, 2**MAX_STREAK - 1, MAX_STREAK + 3, 0.0)
    assert yields(5, 10, 2**MAX_STREAK, MAX_STREAK + 3, 0.0)
    assert yields(5, 10, 1, MAX_STREAK, SLICE_SECONDS)  # a slow batch ends the slice early
