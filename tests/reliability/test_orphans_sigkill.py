"""SIGKILL of the loop at random moments of a real run, restarting each time (the soak, with
100+ kills, is `python tests/reliability/soak_orphans_sigkill.py`)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.soak_orphans_sigkill import Project, kill_at_random

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    made = Project(tmp_path, tasks=8)
    try:
        yield made
    finally:
        for pid in made.marked():  # a failed run leaves nothing behind either
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_random_sigkills_of_the_loop_leave_no_orphan_no_overlap_no_loss(project: Project) -> None:
    figures = kill_at_random(project, kills=30, seed=9, max_delay_s=0.1)
    assert figures.kills == 30
    assert figures.kills_during_agent >= 1  # some landed while an agent ran (how many: timing)
    assert (figures.overlaps, figures.left_alive, figures.problems) == (0, 0, 0)
    assert figures.reused_numbers == 0  # issue 20, item 19
