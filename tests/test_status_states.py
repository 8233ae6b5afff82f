"""`wild --status` shows the loop's state machine state and how long it has been in it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.test_status import STATE, status
from wild.commands.init import init_wild
from wild.paths import WildPaths


@pytest.fixture
def paths(tmp_path: Path) -> WildPaths:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    return paths


def test_the_state_and_how_long_the_loop_has_been_in_it(paths: WildPaths) -> None:
    state = replace(
        STATE, extra={"loopState": {"state": "WAITING", "since": "2026-02-08T11:55:00Z"}}
    )
    data, lines = status(paths, state, {4242: "running", 4300: "running"})
    assert data["loopState"] == {"name": "WAITING", "since": "2026-02-08T11:55:00Z", "forS": 300}
    assert lines[4] == "State: WAITING for 5m 00s"  # after the loop, its agent and work


def test_a_dead_loops_state_counts_until_it_was_last_seen(paths: WildPaths) -> None:
    running = {"state": "RUNNING_AGENT", "since": "2026-02-08T11:55:00Z"}
    data, lines = status(
        paths, replace(STATE, extra={"loopState": running}), {4242: "gone", 4300: "gone"}
    )
    assert data["loopState"]["forS"] == 115  # until the last write, 3m 05s before now
    assert lines[3] == "State: RUNNING_AGENT for 1m 55s"


def test_no_state_recorded_shows_no_line(paths: WildPaths) -> None:
    data, lines = status(paths, STATE, {4242: "running", 4300: "running"})
    assert data["loopState"] is None
    assert not any(line.startswith("State:") for line in lines)
