"""`wild --status` against a real `python -m wild` loop: running, then killed with SIGKILL,
which leaves `"active": true` in state.json and no chance to clean up."""

from __future__ import annotations

import json

import pytest

from tests.loop_processes import Wild, wait_gone

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_status_says_not_running_after_the_loop_is_killed(wild: Wild) -> None:
    wild.paths.tasks.write_text("# Tasks\n\n- [ ] [P1] task-001: Train\n")
    wild.hold("task-001")
    proc = wild.start()
    wild.wait_for("the agent to start", lambda: ("task", "task-001") in wild.worked_on())
    agent_pid = wild.agent_runs()[0][3]

    running = json.loads(wild.cli("--status", "--json"))
    assert running["loop"]["state"] == "running"
    assert running["loop"]["pid"] == proc.pid
    assert running["agent"]["pid"] == agent_pid
    assert (running["work"]["type"], running["work"]["id"]) == ("task", "task-001")
    assert wild.cli("--status").splitlines()[1].startswith(f"Loop: running (pid {proc.pid}, for ")

    proc.kill()  # kill -9
    proc.wait()
    assert json.loads(wild.paths.state.read_text())["active"] is True  # the lie on disk
    lines = wild.cli("--status").splitlines()
    assert lines[1].startswith("Loop: not running (last seen ")
    assert f"killed or crashed: its pid {proc.pid} is gone; iteration 0)" in lines[1]
    # The agent dies with its loop (a parent-death signal): no orphan for status to point at.
    wait_gone(agent_pid, "the agent")  # `wild.wait_for` gives up once the loop is gone
    lines = wild.cli("--status").splitlines()
    assert lines[2] == "Work: task task-001, interrupted; the next loop resumes it"
    after = json.loads(wild.cli("--status", "--json"))
    assert (after["loop"]["active"], after["loop"]["state"], after["agent"]) == (
        False,
        "died",
        None,
    )
