"""An agent that cannot start is an attempt that ended, with its reason (issue 24 item 3)."""

from __future__ import annotations

from pathlib import Path

from tests.loop import harness
from tests.loop.harness import loop_options, new_project
from wild.agents.runner import run_agent
from wild.loop import Loop
from wild.loop.agent_record import interrupted
from wild.loop.hooks import Hooks
from wild.store.state_file import load_state


def test_a_start_failure_ends_the_attempt_and_is_no_killed_loop(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] task-001: Ship\n")
    watcher = harness.TestWatcher(sim.clock)
    hooks = Hooks(watcher=lambda _loop: watcher, barrier_checker=False, signals=False)
    loop = Loop(
        sim.paths,
        loop_options(agent_cmd="./gone.sh", once=True),
        clock=sim.clock,
        out=sim.out.append,
        runner=run_agent,  # the real runner: it cannot exec ./gone.sh
        hooks=hooks,
    )
    result = loop.run()
    assert (result.reason, result.iterations) == ("once", 1)
    [end] = sim.events("agent-end")
    assert (end["exit_code"], end["start_error"]) == (127, "./gone.sh: No such file or directory")
    # The next loop is not told that this one was killed during iteration 1.
    assert interrupted(load_state(sim.paths.state).state) is None
    assert (
        "⚠️  Iteration 1: the agent could not start (./gone.sh: No such file or directory)"
        f" (log: {end['log']})"
    ) in sim.out
    assert sim.task_status("task-001") == "in-progress"
