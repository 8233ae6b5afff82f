"""The whole loop in-process: decide + driver over real files, with a scripted agent, a test
clock and queued file events. Each kind of work and its promise, escalation, failures, limits
and waiting; no subprocess and no sleep."""

from __future__ import annotations

import re
from pathlib import Path

from tests.loop.harness import (
    MONITORED,
    PROCESSED,
    RESOLVED,
    T0,
    TASK,
    add_alert,
    new_project,
    say,
)
from wild.commands import edits
from wild.loop import LoopResult
from wild.wake import WakeReason

# -- each kind of work and its promise ------------------------------------------------------


def test_human_input_processed_is_marked_with_a_processed_line(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    key = edits.add_human_input(sim.paths, "Use batch size 32", urgent=False, now=T0)
    sim.script = [say("Done.", PROCESSED)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 1)
    entry = sim.human().inputs[0]
    assert (entry.key, entry.status) == (key, "processed")
    assert re.search(
        r"### Processed:\n2026-02-08T10:00:00Z - processed by the agent "
        r"\(iteration-1\.log\)\n\n---",
        sim.paths.human.read_text(),
    )
    assert sim.agent is not None
    env = sim.agent.env(1)
    assert (env["WILD_WORK_TYPE"], env["WILD_WORK_ID"], env["WILD_ITERATION"]) == (
        "human-input",
        key,
        "1",
    )
    assert "Use batch size 32" in sim.agent.stdin(1)
    assert f"✅ Human input {key} processed" in sim.out


def test_alert_resolved_by_promise_goes_in_progress_then_resolved(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    add_alert(sim.paths, "alert-1", severity="info")
    sim.script = [say("Restarted the job.", RESOLVED)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 1)
    lines = sim.alert_lines()
    assert [line["status"] for line in lines] == ["pending", "in-progress", "resolved"]
    assert lines[1]["context"] == {"attempt": 1}
    assert "resolvedAt" not in lines[1]
    assert lines[2]["resolvedAt"] == lines[2]["timestamp"]
    assert "✅ Alert resolved: alert-1" in sim.out


def test_task_complete_by_promise(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Preprocess the data\n")
    sim.script = [say("Preprocessed.", TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 1)
    assert sim.paths.tasks.read_text().endswith("- [x] [P1] task-001: Preprocess the data\n")
    assert sim.out[-2:] == ["✅ Task complete: task-001", "✅ All work complete."]


def test_monitoring_runs_when_all_work_waits_on_a_checkable_barrier(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: data-ready\n")
    sim.paths.barriers.write_text(
        "# Barriers\n\n## [WAITING] data-ready\n- Type: file-exists\n"
        "- File: data/ready.flag\n- Interval: 1h\n"
    )
    satisfy = {"replace_in_file": ".wild/barriers.md", "old": "[WAITING]", "new": "[SATISFIED]"}
    sim.script = [[satisfy, *say("The job finished.", MONITORED)], say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 2)
    assert sim.worked_on() == [("monitoring", "data-ready"), ("task", "task-001")]
    assert sim.state().recent_summaries[0] == (
        "iteration 1: monitoring data-ready → done (exit 0, signals MONITORING_COMPLETE)"
    )
    assert "- data-ready (file-exists)" in sim.prompt(1)


# -- waiting -------------------------------------------------------------------------------


def test_an_idle_loop_sleeps_until_a_file_event_then_works(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: gate\n")
    sim.paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")
    sim.script = [say(TASK)]
    result = sim.run(max_time_s=7200.0)
    # Nothing woke it: it slept the whole two hours once, then --max-time ended it.
    assert result == LoopResult("max-time", 0, "reached the time limit")
    assert sim.watcher is not None and sim.watcher.timeouts == [7200.0]
    assert sim.worked_on() == []

    def human_opens_the_gate() -> WakeReason:
        edits.satisfy_barrier(sim.paths, "gate", now=T0)
        return WakeReason("file", str(sim.paths.barriers))

    sim.script = [say(TASK)]
    sim.watcher = None
    sim.queue(human_opens_the_gate)
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 1)
    assert sim.worked_on() == [("task", "task-001")]
    assert [e["reasons"] for e in sim.events("wake")] == [["timeout"], ["file"]]
