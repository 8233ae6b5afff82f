"""What a run's end does to its work beyond the plain promises (those are in test_cycle.py):
a resolve_alert tag, a box the agent ticked itself, monitoring without its promise, a COMPLETE
said too early, and a task that had no id. In-process: no subprocess, no sleep."""

from __future__ import annotations

from pathlib import Path

from tests.loop.harness import RESOLVED, TASK, add_alert, new_project, say

BARRIER = (
    "# Barriers\n\n## [WAITING] data-ready\n- Type: file-exists\n"
    "- File: data/ready.flag\n- Interval: 1h\n"
)
SATISFY = {"replace_in_file": ".wild/barriers.md", "old": "[WAITING]", "new": "[SATISFIED]"}


def test_resolve_alert_tag_records_the_choice(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    add_alert(sim.paths, "alert-1", severity="info", choices=["lower the learning rate", "ignore"])
    sim.script = [say('<resolve_alert>{"id": "alert-1", "choice": "ignore"}</resolve_alert>')]
    result = sim.run()
    assert result.reason == "complete"
    last = sim.alert_lines()[-1]
    assert last["status"] == "resolved"
    assert last["resolution"] == {"choice": "ignore", "note": None}
    assert "- **Choices:** lower the learning rate; ignore" in sim.prompt(1)


def test_an_alert_with_choices_is_not_resolved_without_one(tmp_path: Path) -> None:
    """Issue 24 item 7: it was, and `wild --wait-alert` then printed an empty answer."""
    sim = new_project(tmp_path)
    add_alert(sim.paths, "alert-1", choices=["rerun", "ignore"])
    sim.script = [
        say(RESOLVED),
        say('<resolve_alert>{"id": "alert-1", "choice": "maybe"}</resolve_alert>'),
        say('<resolve_alert>{"id": "alert-1", "choice": "rerun"}</resolve_alert>'),
    ]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 3)
    statuses = [line["status"] for line in sim.alert_lines()]
    assert statuses == ["pending", "in-progress", "in-progress", "in-progress", "resolved"]
    assert sim.alert_lines()[-1]["resolution"] == {"choice": "rerun", "note": None}
    refused = [line for line in sim.out if line.startswith("⚠️  Alert alert-1 offers")]
    assert refused == [
        "⚠️  Alert alert-1 offers rerun, ignore; resolved with no choice, it stays open"
        ' (<resolve_alert>{"alert_id": "alert-1", "choice": …}</resolve_alert>)',
        "⚠️  Alert alert-1 offers rerun, ignore; resolved with 'maybe', not one of them, it"
        ' stays open (<resolve_alert>{"alert_id": "alert-1", "choice": …}</resolve_alert>)',
    ]
    assert len(sim.events("resolve-refused")) == 2


def test_task_ticked_by_the_agent_itself_after_wild_marked_it_in_progress(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Preprocess the data\n")
    # The edit only matches while the box reads [/], so it also proves wild set it first.
    tick = {
        "replace_in_file": ".wild/tasks.md",
        "old": "- [/] [P1] task-001",
        "new": "- [x] [P1] task-001",
    }
    sim.script = [[tick, *say("Ticked it myself.")]]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 1)
    assert sim.task_status("task-001") == "complete"
    assert sim.state().consecutive_failures == 0


def test_monitoring_without_its_promise_is_a_failed_attempt(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: data-ready\n")
    sim.paths.barriers.write_text(BARRIER)
    sim.script = [[SATISFY, *say("Looked around.")], say("Working on it.")]
    result = sim.run(max_iterations=2)
    assert result.reason == "max-iterations"
    state = sim.state()
    assert state.recent_summaries[0] == (
        "iteration 1: monitoring data-ready → failed (exit 0, signals none)"
    )
    # "Working on it." with no signal and no change to the task fails too: two in a row, but
    # only the task keeps a count of its own (monitoring is not retried at once).
    assert state.consecutive_failures == 2
    assert sim.book().failures == {"task-001": 1}


def test_premature_complete_is_recorded_and_the_loop_goes_on(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n")
    sim.script = [
        say("All done, I think.", "<promise>COMPLETE</promise>"),
        say(TASK),
        say(TASK, "<promise>COMPLETE</promise>"),
    ]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 3)
    rejected = sim.events("complete-rejected")
    assert [(e["remaining"], e["next"]) for e in rejected] == [(2, "task-001")]
    assert "⚠️  The agent said COMPLETE with 2 work items left; going on" in sim.out
    assert "- COMPLETE was ignored: 2 work items left, next task-001" in sim.prompt(2)
    assert sim.task_status("task-002") == "complete"


def test_a_task_without_an_id_gets_one_before_it_is_worked_on(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [x] task-001: done\n- [ ] [P1] Build it\n")
    sim.script = [say(TASK)]
    result = sim.run(max_iterations=1)
    assert result.iterations == 1
    assert sim.worked_on() == [("task", "task-002")]
    assert sim.task_status("task-002") == "complete"
