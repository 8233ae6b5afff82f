"""A SIGKILLed `wild` loop takes its agent and the agent's `setsid` grandchild with it, and the
loop started after it never runs the same work twice at once, nor reuses an iteration number
or a log file."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.loop_processes import WAIT_S, Wild, alive, children, wait_gone
from wild.agents.tracking import TRACK_S

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def written(path: Path) -> bool:
    return path.exists() and path.read_text().isdigit()  # whole, not half-written


def two_tasks(wild: Wild) -> None:
    wild.paths.tasks.write_text(
        "# Tasks\n\n- [ ] [P1] task-001: Train\n- [ ] [P2] task-002: Eval\n"
    )


def started_lines(log: Path) -> int:
    return sum(line.startswith("[wild] started ") for line in log.read_text().splitlines())


def test_a_killed_loop_takes_its_agent_and_its_setsid_grandchild_with_it(wild: Wild) -> None:
    two_tasks(wild)
    wild.hold("task-001", "setsid")
    proc = wild.start()
    grandchild_file = wild.tmp / "grandchild.pid"
    wild.wait_for("the agent's grandchild", lambda: written(grandchild_file))
    agent, grandchild = wild.agent_runs()[0][3], int(grandchild_file.read_text())

    proc.kill()  # kill -9: the loop can clean nothing up
    proc.wait()
    wait_gone(agent, "the agent")  # its parent-death signal
    wait_gone(grandchild, "the setsid grandchild")  # the loop's watcher, woken by its death
    state = json.loads(wild.paths.state.read_text())
    assert state["agentRun"]["iteration"] == 1  # recorded before the agent started

    (wild.tmp / "hold-task-001").unlink()
    again = wild.start()
    assert again.wait(WAIT_S) == 0, wild.output()
    runs = [(n, work) for n, _, work, _ in wild.agent_runs()]
    assert runs == [("1", "task-001"), ("2", "task-001"), ("3", "task-002"), ("4", "planning")]
    logs = sorted(wild.paths.logs.glob("iteration-*.log"))
    assert [log.name for log in logs] == [f"iteration-{n}.log" for n in (1, 2, 3, 4)]
    assert [started_lines(log) for log in logs] == [1, 1, 1, 1]  # none written twice
    assert "agentRun" not in json.loads(wild.paths.state.read_text())


def test_a_killed_loop_takes_an_env_i_setsid_grandchild_with_it(wild: Wild) -> None:
    """It carries no WILD_AGENT_RUN and leads a session of its own: the loop found it in its
    agent's tree while it ran and told its watcher."""
    two_tasks(wild)
    wild.hold("task-001", "env-i")
    proc = wild.start()
    grandchild_file = wild.tmp / "grandchild.pid"
    wild.wait_for("the agent's grandchild", lambda: written(grandchild_file))
    grandchild = int(grandchild_file.read_text())
    # The loop looks at its agent's tree TRACK_S apart; a few looks let it see the grandchild.
    time.sleep(10 * TRACK_S)
    proc.kill()
    proc.wait()
    wait_gone(grandchild, "the env -i setsid grandchild")


def test_a_restarted_loop_kills_what_the_killed_one_left_before_any_work(wild: Wild) -> None:
    two_tasks(wild)
    wild.hold("task-001", "setsid")
    proc = wild.start()
    grandchild_file = wild.tmp / "grandchild.pid"
    wild.wait_for("the agent's grandchild", lambda: written(grandchild_file))
    grandchild = int(grandchild_file.read_text())
    stray = wild.paths.root / ".state.json.k1ll3d.tmp"  # a state write cut short
    stray.write_text("{")

    # The loop and its watcher die together: only the restarted loop can clean up now.
    for pid in children(proc.pid):
        if pid != wild.agent_runs()[0][3]:
            os.kill(pid, signal.SIGKILL)
    proc.kill()
    proc.wait()
    wait_gone(wild.agent_runs()[0][3], "the agent")
    assert alive(grandchild)

    wild.hold("task-001")  # the second run waits, so we look while it runs
    again = wild.start()
    wild.wait_for("task-001 to start again", lambda: len(wild.agent_runs()) == 2)
    assert not alive(grandchild)  # killed before the new run started
    assert not stray.exists()
    assert "The last loop was killed during iteration 1 (task task-001)" in wild.output()
    events = [json.loads(line) for line in wild.paths.events.read_text().splitlines()]
    [interrupted] = [e for e in events if e["kind"] == "agent-interrupted"]
    assert (interrupted["iteration"], interrupted["work_id"]) == (1, "task-001")
    wild.go("task-001")
    assert again.wait(WAIT_S) == 0, wild.output()
    assert [n for n, _, _, _ in wild.agent_runs()] == ["1", "2", "3", "4"]
