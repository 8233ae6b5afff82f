"""--max-iterations and --max-time count the run across restarts, as --max-cost and --max-tokens
do: a loop started again with the same limit starts no agent, a higher limit goes on, and the
time no loop ran is not counted. In-process, timed by the test's clock."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.loop.harness import TASK, new_project, say
from tests.loop.test_decide import model
from wild.loop import LoopResult
from wild.loop.limits import carried, kept
from wild.parsers.state import LoopState, render_state

TASKS = "".join(f"- [ ] [P1] task-00{n}: Step {n}\n" for n in range(1, 6))


def test_max_iterations_counts_across_restarts(tmp_path: Path) -> None:
    sim = new_project(tmp_path, TASKS)
    sim.script = [say(TASK)]
    assert sim.run(max_iterations=2) == LoopResult("max-iterations", 2, "reached 2 iterations")
    assert sim.state().extra["countedIterations"] == 2
    # Started again with the same limit: no agent runs.
    assert sim.run(max_iterations=2) == LoopResult("max-iterations", 0, "reached 2 iterations")
    assert len(sim.events("agent-start")) == 2
    # A higher limit lets the run go on, for the difference.
    assert sim.run(max_iterations=3) == LoopResult("max-iterations", 1, "reached 3 iterations")
    assert len(sim.events("agent-start")) == 3


def test_max_time_counts_the_time_loops_ran_not_the_time_between(tmp_path: Path) -> None:
    sim = new_project(tmp_path, TASKS)
    sim.script = [[{"minutes": 5}, *say(TASK)]]
    assert sim.run(max_time_s=600.0).reason == "max-time"
    assert len(sim.events("agent-start")) == 2
    assert sim.state().extra["runningSeconds"] == 600.0
    sim.clock.advance(3 * 3600)  # nobody ran the loop for three hours: not counted
    result = sim.run(max_time_s=600.0)
    assert (result.reason, result.iterations) == ("max-time", 0)
    result = sim.run(max_time_s=900.0)  # five more minutes: one more five-minute run
    assert (result.reason, result.iterations) == ("max-time", 1)
    assert len(sim.events("agent-start")) == 3
    assert sim.task_status("task-003") == "complete"
    assert sim.task_status("task-004") == "todo"


def test_a_killed_loop_cannot_add_time_or_runs(tmp_path: Path) -> None:
    """A loop killed mid-run: the totals it last wrote still hold the restart back."""
    sim = new_project(tmp_path, TASKS)
    sim.script = [[{"minutes": 5}, *say(TASK)]]
    sim.run(max_iterations=2)
    killed = replace(sim.state(), active=True)  # as a kill -9 leaves it
    sim.paths.state.write_bytes(render_state(killed))
    result = sim.run(max_iterations=2, max_time_s=3600.0)
    assert (result.reason, result.iterations) == ("max-iterations", 0)
    result = sim.run(max_iterations=10, max_time_s=600.0)
    assert (result.reason, result.iterations) == ("max-time", 0)


def test_the_running_time_is_written_at_most_every_grain_unless_something_changed() -> None:
    m = replace(model(""), started_mono=1000.0)
    assert kept(m, 1010.0, changed=False) is m.state  # 10 s: not worth a write
    assert carried(kept(m, 1031.0, changed=False)) == (0, 31.0)
    assert carried(kept(m, 1010.0, changed=True)) == (0, 10.0)
    assert carried(LoopState(extra={"countedIterations": "x", "runningSeconds": "nan"})) == (0, 0.0)
    assert carried(LoopState(extra={"countedIterations": -3, "runningSeconds": True})) == (0, 0.0)


def test_the_agents_heartbeat_keeps_the_running_time_a_kill_would_lose(tmp_path: Path) -> None:
    sim = new_project(tmp_path, TASKS)
    saved: list[bytes] = []

    def ten_minutes_in_then_killed(_request: object) -> None:
        sim.clock.advance(600)
        sim.loop._heartbeat(None)  # the runner calls it every minute while the agent runs
        saved.append(sim.paths.state.read_bytes())
        raise RuntimeError("kill -9")

    sim.script = [[{"call": ten_minutes_in_then_killed}]]
    with pytest.raises(RuntimeError, match="kill -9"):
        sim.run(max_time_s=900.0)
    sim.paths.state.write_bytes(saved[0])  # a kill leaves what the heartbeat wrote, no more
    assert sim.state().extra["runningSeconds"] == 600.0
    sim.script = [[{"minutes": 5}, *say(TASK)]]
    result = sim.run(max_time_s=900.0)  # the 5 minutes left: one run
    assert (result.reason, result.iterations) == ("max-time", 1)
