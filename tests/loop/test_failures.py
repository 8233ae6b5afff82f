"""Runs that fail leave the work as it was for the next attempt: a crash, garbage output, a
timeout; a usage limit is waited out and counts as no failure. In-process: the scripted agent
stands for the process (its exit code, its output, a timeout), the test's clock for the wait.
The real process side (a hung agent and its grandchildren killed) stays in test_loop.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loop.harness import (
    PROCESSED,
    RESOLVED,
    T0,
    TASK,
    Actions,
    add_alert,
    new_project,
    notify_human,
    say,
)
from wild.commands import edits
from wild.loop import LoopResult

GARBAGE = say(
    "lorem ipsum <promise>TASK_COMPLETE",  # never closed
    "I would print <promise>ALERT_RESOLVED</promise> here",  # a mention, not a signal
    "```",
    "<promise>HUMAN_INPUT_PROCESSED</promise>",  # inside a code block
    "```",
)
CRASH: Actions = [{"print": "starting"}, {"exit": 3}]


@pytest.mark.parametrize("agent", [CRASH, GARBAGE], ids=["exit-3", "garbage"])
@pytest.mark.parametrize("kind", ["task", "alert", "human-input"])
def test_a_failed_run_changes_nothing_and_the_work_is_retried(
    tmp_path: Path, agent: Actions, kind: str
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n" if kind == "task" else "")
    if kind == "alert":
        add_alert(sim.paths, "alert-1", severity="info")
    if kind == "human-input":
        edits.add_human_input(sim.paths, "Use batch size 32", urgent=False, now=T0)
    sim.script = [agent]

    result = sim.run(max_iterations=1)
    assert (result.reason, result.iterations) == ("max-iterations", 1)
    crashed = [line for line in sim.out if line.startswith("⚠️  Iteration 1:")]
    log = sim.paths.logs / "iteration-1.log"
    why = (
        "the agent exited with 3: starting"
        if agent is CRASH
        else "no promise or <event_output> found in the agent's final message (exit 0);"
        " it last said: ```"
    )
    assert crashed == [f"⚠️  Iteration 1: {why} (log: {log})"]
    state = sim.state()
    assert state.consecutive_failures == 1
    assert state.current_work is not None and state.current_work.type == kind
    if kind == "task":
        assert sim.task_status("task-001") == "in-progress"
    if kind == "alert":
        assert [line["status"] for line in sim.alert_lines()] == ["pending", "in-progress"]
    if kind == "human-input":
        assert [h.status for h in sim.human().inputs] == ["pending"]

    sim.script = [say({"task": TASK, "alert": RESOLVED, "human-input": PROCESSED}[kind])]
    result = sim.run()  # a new loop picks the same work up again and finishes it
    assert (result.reason, result.iterations) == ("complete", 1)
    assert sim.state().consecutive_failures == 0
    assert sim.worked_on()[0] == sim.worked_on()[1]
    if kind == "alert":
        assert sim.alert_lines()[-2]["context"] == {"attempt": 2}


def test_a_run_that_timed_out_is_a_failure_and_the_work_is_tried_again(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    timed_out = {"timed_out": True, "exit_code": -15, "duration_s": 1.0}
    sim.script = [[*say("training…"), {"run": timed_out}], say(TASK)]
    result = sim.run(agent_timeout_s=1.0)
    assert (result.reason, result.iterations) == ("complete", 2)
    log = sim.paths.logs / "iteration-1.log"
    assert f"⚠️  Iteration 1: timed out after 1 s: training… (log: {log})" in sim.out
    assert sim.state().recent_summaries[0] == (
        "iteration 1: task task-001 → timed out (exit -15, signals none)"
    )
    assert sim.worked_on() == [("task", "task-001")] * 2


def test_a_usage_limit_is_waited_out_not_counted_and_stop_ends_the_wait(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    notify_human(sim.paths)
    sim.queue_request("stop")  # made while the loop waits for the limit to reset
    sim.script = [[{"print": "Usage limit reached. Try again in 5 hours."}, {"exit": 1}]]
    result = sim.run()
    assert result == LoopResult("stopped", 1, "stopped on request")
    # 5 hours off: waited out an hour at a time (the cap), each step said.
    assert (
        "⏳ The agent hit a usage limit (it resets at 2026-02-08T15:00:00Z); waiting 3600 s"
        " (the longest wait, then the agent is tried again)"
    ) in sim.out
    assert [e["wait_s"] for e in sim.events("rate-limited")] == [3600.0]
    assert any("The agent hit a usage limit" in note for note in sim.notes), sim.notes
    assert (sim.state().consecutive_failures, sim.book().failures) == (0, {})
    # It slept for the reset, and the stop ended that sleep: no time passed.
    assert sim.watcher is not None and sim.watcher.timeouts == [3600.0]
    assert sim.clock.now() == T0


@pytest.mark.parametrize(
    "reply",
    [
        "Done. Note: the API's rate limit resets in 5 hours.",
        "Finished task: usage limit reached|1770600000",  # a task title, quoted
    ],
)
def test_a_successful_run_that_mentions_a_limit_is_not_waited_for(
    tmp_path: Path, reply: str
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: usage limit reached|1770600000\n")
    sim.script = [say(reply, TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 1)
    assert sim.events("rate-limited") == []
    assert "hit a usage limit" not in sim.out


def test_a_failed_attempt_that_exited_cleanly_says_why(tmp_path: Path) -> None:
    """Issue 24 item 6: `--agent-cmd cat` failed every iteration with no reason shown."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    sim.script = [say("I looked at it.", "Done for now."), say("Trained.", TASK)]
    sim.run()
    [why] = [line for line in sim.out if line.startswith("⚠️  Iteration 1:")]
    assert why.startswith(
        "⚠️  Iteration 1: no promise or <event_output> found in the agent's final message"
        " (exit 0); it last said: Done for now. (log: "
    )


def test_a_planning_run_that_planned_nothing_says_so(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    sim.script = [say("Hmm.")]
    sim.run(plan=True, once=True)
    assert any(
        line.startswith(
            "⚠️  Iteration 1: the planning run added no task to .wild/tasks.md and did not say"
            " COMPLETE; it last said: Hmm. (log: "
        )
        for line in sim.out
    )
