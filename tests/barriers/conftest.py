"""Helpers for barrier tests: a project with `.wild/`, a settable clock, barriers from text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from wild.parsers.barriers import Barrier, parse
from wild.paths import WildPaths

T0 = datetime(2026, 2, 8, 10, 0, 0, tzinfo=UTC)


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime = T0) -> None:
        self.moment = start
        self.mono = 1000.0

    def now(self) -> datetime:
        return self.moment

    def monotonic(self) -> float:
        return self.mono

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)
        self.mono += seconds


def barrier(block: str) -> Barrier:
    """The one barrier in `block` (a `## [STATUS] id` header and its field lines)."""
    doc = parse(block)
    assert len(doc.barriers) == 1, doc.problems
    return doc.barriers[0]


@pytest.fixture
def paths(tmp_path: Path) -> WildPaths:
    """A project folder holding an empty `.wild/`."""
    root = tmp_path / "project" / ".wild"
    root.mkdir(parents=True)
    return WildPaths(root)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
