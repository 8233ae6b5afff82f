"""Asking the human: the agent's NEED_HUMAN_INPUT on a task or an alert, a critical alert the
policy escalates, and repeated failures; each answer lets the work go on. In-process: the
human's answer arrives as a queued file event when the loop sleeps."""

from __future__ import annotations

from pathlib import Path

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


def answer(text: str) -> dict[str, str]:
    """The human's answer, appended to human.md while the agent works on something else."""
    entry = f"\n## [PENDING] 2026-02-08T12:00:00Z\n### Input:\n{text}\n\n---\n"
    return {"append_file": ".wild/human.md", "text": entry}


def test_need_human_input_on_a_task_holds_it_while_other_work_goes_on(tmp_path: Path) -> None:
    sim = new_project(
        tmp_path, "- [ ] [P1] task-001: Pick the dataset\n- [ ] [P2] task-002: Write docs\n"
    )
    notify_human(sim.paths)
    sim.script = [
        say(
            "Two datasets fit.",
            "<promise>NEED_HUMAN_INPUT</promise>",
            "<reason>Which dataset: 2024 or 2025?</reason>",
            "<urgency>high</urgency>",
        ),
        # task-002 goes on meanwhile; at its end the human's answer arrives in human.md.
        [answer("Use the 2025 snapshot."), *say(TASK)],
        say(PROCESSED),
        say(TASK),
    ]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 4)
    assert sim.worked_on() == [
        ("task", "task-001"),
        ("task", "task-002"),
        ("human-input", "2026-02-08T12:00:00Z"),
        ("task", "task-001"),
    ]
    question = sim.human().inputs[0]
    assert (question.status, question.related_alert, question.type) == (
        "answered",
        "task-001",
        "question",
    )
    assert question.content == "Which dataset: 2024 or 2025?\n\nUrgency: high"
    assert f"- {question.key} (about task-001): Which dataset: 2024 or 2025?" in sim.prompt(3)
    assert sim.notes[0].startswith("wild needs you (task-001): Which dataset: 2024 or 2025?")
    assert sim.book().awaiting == {}
    # Lineage: the question names the agent run it came from.
    first_run = sim.events("agent-end")[0]["id"]
    assert [e["cause"] for e in sim.events("escalation")] == [first_run]


def test_need_human_input_on_an_alert_escalates_it_and_the_answer_guides_the_retry(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Write docs\n")
    add_alert(sim.paths, "alert-1", severity="info")
    sim.script = [
        say("<promise>NEED_HUMAN_INPUT</promise>", "<reason>Roll back or restart?</reason>"),
        [answer("Roll back to step 200."), *say(TASK)],
        say(PROCESSED),
        say(RESOLVED),
    ]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 4)
    assert sim.worked_on() == [
        ("alert", "alert-1"),
        ("task", "task-001"),
        ("human-input", "2026-02-08T12:00:00Z"),
        ("alert", "alert-1"),
    ]
    lines = sim.alert_lines()
    assert [line["status"] for line in lines] == [
        "pending",
        "in-progress",
        "escalated",
        "pending",
        "in-progress",
        "resolved",
    ]
    assert lines[3]["humanGuidance"] == "Roll back to step 200."
    assert lines[4]["context"] == {"attempt": 2}
    assert "### Guidance from the human:\n> Roll back to step 200." in sim.prompt(4)


def test_critical_alert_at_low_autonomy_is_escalated_blocking_and_resumes_after_input(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Write docs\n")
    edits.update_policy(sim.paths, "interactive", duration=None, now=T0)
    notify_human(sim.paths, progress_reports="None")
    add_alert(sim.paths, "alert-1", severity="critical")
    escalated = "⏸️  Escalated alert-1 to the human: Critical alert - policy requires human "
    keys: list[str] = []

    def human_answers() -> None:
        assert any(line.startswith(escalated) for line in sim.out)  # asked before answered
        text = "Restart from the last checkpoint"
        keys.append(edits.add_human_input(sim.paths, text, urgent=False, now=sim.clock.now()))

    sim.queue_edit(sim.paths.human, human_answers)
    sim.script = [say(PROCESSED), say(RESOLVED), say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 3)
    # Nothing else started while the question was open (interactive), then the work resumed.
    assert sim.worked_on() == [
        ("human-input", keys[0]),
        ("alert", "alert-1"),
        ("task", "task-001"),
    ]
    lines = sim.alert_lines()
    assert [line["status"] for line in lines] == [
        "pending",
        "escalated",
        "pending",
        "in-progress",
        "resolved",
    ]
    assert lines[1]["escalatedAt"] == lines[1]["timestamp"]
    question = sim.human().inputs[0]
    assert (question.status, question.related_alert) == ("answered", "alert-1")
    assert question.content.startswith("Critical alert - policy requires human notification")
    assert sim.notes[0].startswith(
        "wild needs you (alert-1): Critical alert - policy requires human notification\n"
        "[CRITICAL] train-job-1: alert-1: loss jumped to 9.8"
    )
    assert f"{escalated}notification" in sim.out
    assert "Restart from the last checkpoint" in sim.prompt(2)


def test_repeated_task_failures_escalate_and_the_answer_gives_fresh_attempts(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    notify_human(sim.paths)

    def human_answers() -> None:
        assert any(line.startswith("📣 wild needs you (task-001)") for line in sim.out)
        edits.add_human_input(sim.paths, "Use the smaller model", urgent=False, now=sim.clock.now())

    sim.queue_time(5.0)  # the backoff after the second failure
    sim.queue_edit(sim.paths.human, human_answers)
    crash: Actions = [*say("Traceback: CUDA out of memory"), {"exit": 3}]
    sim.script = [crash, crash, crash, say(PROCESSED), say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 5)
    assert [w[0] for w in sim.worked_on()] == ["task"] * 3 + ["human-input", "task"]
    question = sim.human().inputs[0]
    assert question.content.startswith(
        "task-001 failed 3 times in a row (escalate after 3)\n\nLast log: "
    )
    assert question.status == "answered"
    assert sim.notes[0].startswith(
        "wild needs you (task-001): task-001 failed 3 times in a row (escalate after 3)"
    )
    assert (sim.book().failures, sim.state().consecutive_failures) == ({}, 0)
