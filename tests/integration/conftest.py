"""Fixtures for memory tests: a copy of the example vault registered as the default vault."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from engram.service import Engram

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"


class Clock:
    """A settable UTC clock for the facade (`engram.clock = clock`)."""

    def __init__(self, start: dt.datetime) -> None:
        self.now = start

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock(dt.datetime(2026, 3, 5, 9, 30, tzinfo=dt.UTC))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A fresh copy of the example vault."""
    return Path(shutil.copytree(EXAMPLE, tmp_path / "Brewline"))


@pytest.fixture
def mem(engram: Engram, vault: Path, clock: Clock) -> Engram:
    """The facade with the example vault as its default vault and a fixed clock."""
    engram.clock = clock  # type: ignore[method-assign]
    engram.init_vault(str(vault))
    return engram
