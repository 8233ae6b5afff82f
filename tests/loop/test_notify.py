"""Telling the human without waiting: NOTIFY_HUMAN batched by the context switch penalty, notes
still queued when the loop ends, and a due progress report. In-process: the Sim records what
the Notify Command is sent; each scripted run takes minutes of the test's clock."""

from __future__ import annotations

import json
from pathlib import Path

from tests.loop.harness import TASK, new_project, notify_human, say


def note(reason: str, minutes: int) -> list[dict[str, object]]:
    return [
        *say("<promise>NOTIFY_HUMAN</promise>", f"<reason>{reason}</reason>", TASK),
        {"minutes": minutes},
    ]


def test_notify_human_does_not_wait_and_is_batched_by_the_context_switch_penalty(
    tmp_path: Path,
) -> None:
    sim = new_project(
        tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n- [ ] [P1] task-003: C\n"
    )
    notify_human(sim.paths, context_switch_penalty="15 minutes")
    sim.script = [note("first", 5), note("second", 5), note("third", 5)]  # end 10:05, :10, :15
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 3)
    # first goes out at once; second and third wait out the 15 minutes, then go as one.
    assert sim.notes == [
        "wild (task-001): first",
        "2 notifications from wild:\n\nwild (task-002): second\n\nwild (task-003): third",
    ]
    assert [e["message"] for e in sim.events("notification")] == ["first", "second", "third"]


def test_batched_notes_still_queued_go_out_when_the_loop_ends(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    notify_human(sim.paths, context_switch_penalty="15 minutes")
    sim.script = [note("first", 1), note("second", 1)]
    result = sim.run()
    assert result.reason == "complete"
    assert sim.notes == ["wild (task-001): first", "wild (task-002): second"]


def test_the_same_note_again_is_recorded_but_not_sent_twice(tmp_path: Path) -> None:
    """Issue 24 item 13: dit-training's "human-check packet … is ready" went out twice (the
    analysis said it, then the planning run that confirmed the goal said it again)."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    notify_human(sim.paths, context_switch_penalty="15 minutes")
    sim.script = [note("the packet is ready", 1), note("the packet is ready", 1)]
    assert sim.run().reason == "complete"
    assert sim.notes == ["wild (task-001): the packet is ready"]
    told = [(e["related"], e["repeated"]) for e in sim.events("notification")]
    assert told == [("task-001", False), ("task-002", True)]


def test_a_due_progress_report_goes_to_human_md_events_and_the_notify_command(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    notify_human(sim.paths, progress_reports="Every 1 minutes")
    # A loop started long ago and never reported: the first cycle owes a report.
    state = json.loads(sim.paths.state.read_text())
    state["startedAt"] = "2020-01-01T00:00:00Z"
    sim.paths.state.write_text(json.dumps(state))
    sim.script = [say(TASK)]
    result = sim.run(once=True)
    assert result.reason == "once"
    reports = [h for h in sim.human().inputs if h.status == "report"]
    assert len(reports) == 1
    assert reports[0].content.startswith("Tasks: 0/1 complete\nAlerts: 0 open\n")
    assert len(sim.events("progress-report")) == 1
    assert sim.notes[0].startswith("Progress report ")
    assert sim.state().last_progress_report is not None
