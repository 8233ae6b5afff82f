"""A human's answer reaches the work that asked: the next prompt for that task carries the
question and the answer, until the task is done (issue: answers go to the wrong place)."""

from __future__ import annotations

from pathlib import Path

from tests.loop.harness import PROCESSED, T0, TASK, new_project, say
from wild.commands import edits
from wild.wake import WakeReason

ASK = (
    "<promise>NEED_HUMAN_INPUT</promise>",
    "<reason>Which learning rate should I keep?</reason>",
)
ANSWER = "Keep 3e-4; it is cheaper."


def test_the_answer_is_routed_back_to_the_task_that_asked(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Compare runs\n- [ ] [P2] task-002: Other\n")

    def human_answers() -> WakeReason:
        edits.add_human_input(sim.paths, ANSWER, urgent=False, now=T0)
        return WakeReason("file", str(sim.paths.human))

    sim.queue(human_answers)
    sim.script = [
        say("Both runs tie.", *ASK),
        say("Other work.", TASK),
        say("Noted the human's choice.", PROCESSED),
        say("Kept the 3e-4 run.", TASK),
    ]
    result = sim.run()
    assert result.reason == "complete"
    assert sim.worked_on() == [
        ("task", "task-001"),
        ("task", "task-002"),
        ("human-input", "2026-02-08T10:00:00.000Z"),
        ("task", "task-001"),
    ]
    question = next(e for e in sim.human().inputs if e.type == "question")
    assert (question.status, question.related_alert) == ("answered", "task-001")
    again = sim.prompt(4)
    assert "### You asked the human, and they answered:" in again
    assert "Question: Which learning rate should I keep?" in again
    assert f"Answer: {ANSWER}" in again
    assert "they answered" not in sim.prompt(2)  # task-002 asked nothing
    assert "answers" not in sim.state().extra  # done: the answer is not carried further


def test_an_answer_survives_a_failed_attempt_and_a_restart(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Compare runs\n")
    sim.script = [say(*ASK)]
    sim.run(max_iterations=1)
    edits.add_human_input(sim.paths, ANSWER, urgent=False, now=T0)
    sim.script = [say(PROCESSED), say("Crashed before finishing."), say(TASK)]
    result = sim.run()  # a fresh loop: the answer is in state.json
    assert result.reason == "complete"
    assert [w for w, _ in sim.worked_on()] == ["task", "human-input", "task", "task"]
    for iteration in (3, 4):
        assert f"Answer: {ANSWER}" in sim.prompt(iteration)
