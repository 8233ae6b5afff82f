"""--once, --max-iterations and waiting: what ends the loop, and how it sleeps while blocked.
In-process: the watcher stand-in records how long the loop asked to sleep, so "it does not
spin" is a fact about its requests, not a race against a real clock (max-time: test_cycle.py)."""

from __future__ import annotations

from pathlib import Path

from tests.loop.harness import MONITORED, T0, TASK, new_project, say, set_policy
from wild.commands import edits
from wild.loop import LoopResult
from wild.loop.decide import MONITOR_EVERY_S
from wild.loop.limits import backoff_s

GATE = "# Barriers\n\n## [WAITING] gate\n- Type: manual\n"
BARRIER = (
    "# Barriers\n\n## [WAITING] data-ready\n- Type: file-exists\n"
    "- File: data/ready.flag\n- Interval: 1h\n"
)


def test_once_runs_one_iteration(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n")
    sim.script = [say(TASK)]
    result = sim.run(once=True)
    assert result == LoopResult("once", 1, "one iteration done")
    assert (sim.task_status("task-001"), sim.task_status("task-002")) == ("complete", "todo")


def test_once_with_nothing_to_run_returns_at_once(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n  - blockedBy: gate\n")
    sim.paths.barriers.write_text(GATE)
    result = sim.run(once=True)
    assert result == LoopResult("once", 0, "nothing to run now")
    assert sim.out == []
    assert sim.watcher is not None and sim.watcher.timeouts == []  # it never slept


def test_max_iterations_counts_agent_runs_not_idle_waits(tmp_path: Path) -> None:
    sim = new_project(
        tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n  - blockedBy: gate\n"
    )
    sim.paths.barriers.write_text(GATE)

    def open_gate() -> None:
        assert "⏳ Waiting (gate); sleeping until something changes" in sim.out
        edits.satisfy_barrier(sim.paths, "gate", now=T0)

    sim.queue_edit(sim.paths.barriers, open_gate)
    sim.script = [say(TASK)]
    result = sim.run(max_iterations=2)
    assert result == LoopResult("max-iterations", 2, "reached 2 iterations")
    assert sim.watcher is not None and sim.watcher.timeouts == [None]  # the one idle wait
    assert sim.agent is not None
    assert [sim.agent.env(n)["WILD_ITERATION"] for n in (1, 2)] == ["1", "2"]
    assert sim.task_status("task-002") == "complete"


def test_monitoring_repeats_while_the_loop_stays_blocked(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: data-ready\n")
    sim.paths.barriers.write_text(BARRIER)
    sim.script = [say("Still running.", MONITORED)]
    result = sim.run(max_iterations=2)
    assert result == LoopResult("max-iterations", 2, "reached 2 iterations")
    assert sim.worked_on() == [("monitoring", "data-ready")] * 2
    assert "⏳ Waiting (data-ready); sleeping until something changes" in sim.out
    # Between the two runs it slept until the next monitoring was due, once.
    assert sim.watcher is not None and sim.watcher.timeouts == [MONITOR_EVERY_S]


def test_idle_loop_does_not_wake_while_nothing_happens(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n  - blockedBy: gate\n")
    sim.paths.barriers.write_text(GATE)
    sim.queue_request("stop")
    result = sim.run()
    assert result == LoopResult("stopped", 0, "stopped on request")
    # One sleep with no timeout (nothing is due), ended by the stop request alone.
    assert sim.watcher is not None and sim.watcher.timeouts == [None]
    assert [e["reasons"] for e in sim.events("wake")] == [["control"]]


def costly(usd: float, tokens: int) -> list[dict[str, object]]:
    return [{"run": {"cost_usd": usd, "input_tokens": tokens, "output_tokens": tokens}}]


def test_max_cost_stops_the_run_and_holds_across_restarts(tmp_path: Path) -> None:
    tasks = "".join(f"- [ ] [P1] task-00{n}: T{n}\n" for n in range(1, 6))
    sim = new_project(tmp_path, tasks)
    sim.script = [[*costly(0.60, 1000), *say(TASK)]]
    first = sim.run(max_cost_usd=1.0)
    assert first == LoopResult(
        "max-cost", 2, "reached the cost limit ($1.20 of $1.00); a higher --max-cost goes on"
    )
    assert sim.state().total_cost_usd == 1.2
    # The same limit again (a killed loop restarted): no agent starts.
    again = sim.run(max_cost_usd=1.0)
    assert (again.reason, again.iterations) == ("max-cost", 0)
    # A higher limit lets the run go on, counting from what was spent.
    more = sim.run(max_cost_usd=2.0)
    assert (more.reason, more.iterations) == ("max-cost", 2)
    assert [sim.task_status(f"task-00{n}") for n in range(1, 6)] == ["complete"] * 4 + ["todo"]


def test_max_tokens_counts_input_and_output(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    sim.script = [[*costly(0.0, 500), *say(TASK)]]
    result = sim.run(max_tokens=1000)
    assert result == LoopResult(
        "max-tokens",
        1,
        "reached the token limit (1,000 of 1,000 tokens); a higher --max-tokens goes on",
    )
    (record,) = sim.events("agent-end")  # every iteration's record: who ran, what it cost
    assert {k: record[k] for k in ("agent", "model", "input_tokens", "output_tokens")} == {
        "agent": "custom",
        "model": None,
        "input_tokens": 500,
        "output_tokens": 500,
    }
    assert (record["cost_usd"], record["is_error"], record["problems"]) == (0.0, False, [])


def test_once_with_only_work_waiting_for_the_human_says_so(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [say("<promise>NEED_HUMAN_INPUT</promise><reason>which data?</reason>")]
    sim.run(once=True)
    result = sim.run(once=True)
    assert result == LoopResult("waiting-human", 0, "waiting for the human's answer")


def test_context_window_sets_how_many_earlier_summaries_a_prompt_carries(tmp_path: Path) -> None:
    tasks = "".join(f"- [ ] [P1] task-00{n}: T{n}\n" for n in range(1, 5))
    sim = new_project(tmp_path, tasks)
    sim.script = [say(TASK)]
    sim.run(context_window=2)
    notes = sim.prompt(4).split("### Notes from earlier iterations:", 1)[1]
    assert "iteration 3" in notes and "iteration 2" in notes
    assert "iteration 1" not in notes
    none = new_project(tmp_path / "none", tasks)
    none.script = [say(TASK)]
    none.run(context_window=0)
    assert "Notes from earlier iterations" not in none.prompt(4)


CRASH: list[dict[str, object]] = [*say("Traceback: it broke"), {"exit": 3}]


def test_failed_iterations_back_off_exponentially(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    set_policy(sim.paths, repeated_failures="never")  # no escalation in this test
    crashes = [[*say(f"Traceback: broke {n}"), {"exit": 3}] for n in range(4)]  # no stall
    sim.script = [*crashes, say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 5)
    assert sim.watcher is not None
    assert sim.watcher.timeouts == [5.0, 10.0, 20.0]  # none after the first failure
    backoffs = [(e["failures"], e["wait_s"]) for e in sim.events("backoff")]
    assert backoffs == [(2, 5.0), (3, 10.0), (4, 20.0)]
    assert "⏳ 4 failed iterations in a row; the next starts in 20 s" in sim.out


def test_no_next_iteration_is_announced_when_a_limit_ends_the_loop(tmp_path: Path) -> None:
    """Issue 24 item 13: "the next starts in 10 s", then "wild stopped: reached 3 iterations"."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    set_policy(sim.paths, repeated_failures="never")
    sim.script = [[*say(f"Traceback: broke {n}"), {"exit": 3}] for n in range(3)]
    result = sim.run(max_iterations=3)
    assert (result.reason, result.message) == ("max-iterations", "reached 3 iterations")
    waits = [line for line in sim.out if line.startswith("⏳")]
    assert waits == ["⏳ 2 failed iterations in a row; the next starts in 5 s"]


def test_the_humans_input_does_not_wait_out_a_backoff(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    set_policy(sim.paths, repeated_failures="never")
    sim.queue_edit(
        sim.paths.human,
        lambda: edits.add_human_input(sim.paths, "Try the CPU", urgent=False, now=T0),
    )
    sim.script = [CRASH, CRASH, say("<promise>HUMAN_INPUT_PROCESSED</promise>"), say(TASK)]
    sim.run()
    assert [kind for kind, _ in sim.worked_on()] == ["task", "task", "human-input", "task"]
    assert sim.watcher is not None
    # Woken by the human's edit during the 5 s backoff: the input ran at once; the task then
    # waited out what was left of it.
    assert sim.watcher.timeouts[0] == 5.0


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [backoff_s(n) for n in (0, 1, 2, 3, 4)] == [0.0, 0.0, 5.0, 10.0, 20.0]
    assert backoff_s(10**6) == 300.0


def test_the_same_failure_three_times_pauses_the_loop_and_asks_the_human(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n")
    set_policy(sim.paths, repeated_failures="never")  # only the stall rule can stop this
    no_key: list[dict[str, object]] = [*say("Error: ANTHROPIC_API_KEY is not set"), {"exit": 1}]
    sim.script = [no_key, no_key, no_key, say(TASK), say(TASK)]
    sim.queue_time(5.0)  # the backoff after the second failure
    sim.queue_request("resume")  # the human fixed the cause
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 5)
    (stall,) = sim.events("stalled")
    assert stall["failure"] == "the agent exited with 1: Error: ANTHROPIC_API_KEY is not set"
    question = sim.human().inputs[0]
    assert question.content.startswith(
        "the same failure 3 times in a row: the agent exited with 1: Error: ANTHROPIC_API_KEY"
    )
    assert any(line.startswith("⏸️  Paused: the same failure 3 times") for line in sim.out)


def test_different_failures_do_not_pause(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    set_policy(sim.paths, repeated_failures="never")
    sim.script = [[*say(f"Error {n}"), {"exit": 1}] for n in range(4)] + [say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 5)
    assert sim.events("stalled") == []
