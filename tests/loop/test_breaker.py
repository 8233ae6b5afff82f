"""The circuit breaker: after the policy's Max Retry Attempts failures in a row (5, as seed 001
and SPEC §8 set it) the work is escalated as the policy says and held; the loop neither exits
nor spins. In-process, timed by the test's clock."""

from __future__ import annotations

from pathlib import Path

from tests.loop.harness import TASK, new_project, notify_human, say, set_policy


def test_five_failures_open_the_circuit_hold_the_work_and_the_loop_waits(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n- [ ] [P2] task-002: Plot\n")
    notify_human(sim.paths)
    set_policy(
        sim.paths, max_retry_attempts="5", repeated_failures="Escalate after 5 failed attempts"
    )
    # Each failure in other words: the same-failure stall must not be what stops it.
    crashes = [[*say(f"Traceback: CUDA error {n}"), {"exit": 3}] for n in range(5)]
    sim.script = [*crashes, say(TASK)]  # task-002 succeeds at the first go

    for seconds in (5.0, 10.0, 20.0, 40.0):  # the backoffs pass, as the real watcher lets them
        sim.queue_time(seconds)

    def held_and_asleep() -> None:
        assert sim.state().extra["loopState"]["state"] == "ESCALATED"

    sim.queue_edit(sim.paths.human, held_and_asleep)
    sim.queue_request("stop")
    result = sim.run()
    assert (result.reason, result.iterations) == ("stopped", 6)
    assert [w for w in sim.worked_on()] == [("task", "task-001")] * 5 + [("task", "task-002")]
    assert sim.book().awaiting == {
        "task-001": "task-001 failed 5 times in a row (escalate after 5)"
    }
    assert sim.task_status("task-001") == "in-progress"
    assert sim.task_status("task-002") == "complete"
    assert sim.notes[0].startswith("wild needs you (task-001): task-001 failed 5 times in a row")
    assert sim.watcher is not None
    # Backoffs after the failures (5, 10, 20, 40 s), then no timed wake-up: held, not spinning.
    assert sim.watcher.timeouts == [5.0, 10.0, 20.0, 40.0, None, None]
    assert sim.events("stalled") == []
