"""A goal with no open work: the agent plans, the loop works the plan, and it ends only when
the agent, asked once more with the goal, confirms nothing is left (issue: first example)."""

from __future__ import annotations

from pathlib import Path

from tests.loop.harness import TASK, new_project, say, set_policy

COMPLETE = "<promise>COMPLETE</promise>"
PLAN = "- [ ] [P1] Prepare the data\n- [ ] [P1] Train the model\n"


def write_plan(text: str) -> dict[str, str]:
    return {"append_file": ".wild/tasks.md", "text": text}


def test_an_empty_folder_is_planned_worked_and_confirmed(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    sim.script = [
        [write_plan(PLAN), *say("Wrote the plan.")],
        say("Prepared.", TASK),
        say("Trained.", TASK),
        say("The goal is met; nothing is left.", COMPLETE),
    ]
    result = sim.run(plan=True)
    assert (result.reason, result.iterations) == ("complete", 4)
    assert sim.worked_on() == [
        ("planning", "planning"),
        ("task", "task-001"),
        ("task", "task-002"),
        ("planning", "planning"),
    ]
    assert sim.agent is not None
    assert sim.agent.env(1)["WILD_WORK_TYPE"] == "planning"
    first, last = sim.prompt(1), sim.prompt(4)
    assert "There is no plan yet" in first
    assert "Ship it" in first or "## Main Goal" in first
    assert "Every task of the plan is finished (2 of 2)" in last
    assert sim.task_status("task-001") == sim.task_status("task-002") == "complete"


def test_the_loop_does_not_end_until_planning_confirms(tmp_path: Path) -> None:
    """A plan finished, but the agent finds more to do: the new task runs before the end."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    sim.script = [
        say("Trained.", TASK),
        [write_plan("- [ ] [P2] Write the report\n"), *say("The report is missing.")],
        say("Reported.", TASK),
        say(COMPLETE),
    ]
    result = sim.run(plan=True)
    assert result.reason == "complete"
    assert [w for w, _ in sim.worked_on()] == ["task", "planning", "task", "planning"]
    assert sim.task_status("task-002") == "complete"


def test_complete_from_a_task_run_is_not_a_confirmation(tmp_path: Path) -> None:
    """COMPLETE said while working a task ends nothing: only a planning run confirms."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    sim.script = [say("Trained.", TASK, COMPLETE), say(COMPLETE)]
    result = sim.run(plan=True)
    assert result.reason == "complete"
    assert [w for w, _ in sim.worked_on()] == ["task", "planning"]


def test_an_agent_that_never_plans_asks_the_human_under_the_default_policy(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path)
    sim.script = [say("I am not sure what to do.")]
    result = sim.run(plan=True, once=False, max_iterations=3)
    assert result.iterations == 3
    assert "planning failed 3 times in a row" in sim.state().extra["awaitingHuman"]["planning"]
    assert [e.status for e in sim.human().inputs] == ["question"]


def test_an_agent_that_never_plans_ends_a_hands_off_loop_with_a_clear_message(
    tmp_path: Path,
) -> None:
    sim = new_project(tmp_path)
    set_policy(sim.paths, autonomy_level="high")
    sim.script = [say("I am not sure what to do.")]
    result = sim.run(plan=True)
    assert (result.reason, result.iterations) == ("no-plan", 3)
    assert "no plan" in result.message and ".wild/tasks.md" in result.message


def test_planning_that_asks_the_human_waits_for_the_answer(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    sim.script = [
        say(
            "<promise>NEED_HUMAN_INPUT</promise>",
            "<reason>Which dataset should the plan use?</reason>",
        )
    ]
    result = sim.run(plan=True, once=True)
    assert result.iterations == 1
    questions = [e for e in sim.human().inputs if e.status == "question"]
    assert len(questions) == 1
    assert "Which dataset" in questions[0].content
    assert sim.state().extra["awaitingHuman"] == {"planning": "Which dataset should the plan use?"}


def test_planning_off_ends_when_the_tasks_are_done(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Train\n")
    sim.script = [say(TASK)]
    result = sim.run(plan=False)
    assert (result.reason, result.iterations) == ("complete", 1)


def test_a_planning_run_is_announced_once_by_name(tmp_path: Path) -> None:
    sim = new_project(tmp_path)
    sim.script = [say(COMPLETE)]
    sim.run(plan=True)
    assert "🤖 Iteration 1: planning" in sim.out


def test_a_plan_written_as_the_planning_prompt_shows_is_worked_in_order(tmp_path: Path) -> None:
    """Issue 24 item 1: `dependsOn: task-001` in a plan without ids names its first task."""
    sim = new_project(tmp_path)
    sim.script = [
        [
            write_plan("- [ ] [P1] Prepare the data\n- [ ] [P2] Train\n  - dependsOn: task-001\n"),
            *say("Wrote the plan."),
        ],
        say("Prepared.", TASK),
        say("Trained.", TASK),
        say("The goal is met.", COMPLETE),
    ]
    result = sim.run(plan=True)
    assert result.reason == "complete"
    assert sim.worked_on()[1:3] == [("task", "task-001"), ("task", "task-002")]


def test_a_dependency_on_an_unknown_task_is_a_question_not_a_silent_sleep(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-002: Train\n  - dependsOn: task-009\n")
    sim.queue_request("stop")  # when the loop sleeps, after it asked
    result = sim.run(plan=True)
    assert result.reason == "stopped"
    assert sim.worked_on() == []
    [question] = sim.human().inputs
    assert question.status == "question"
    assert "task-002: depends on unknown task task-009" in question.content
    assert any("depends on unknown task task-009" in line for line in sim.out)


def test_a_planning_run_that_launches_a_sweep_has_planned(tmp_path: Path) -> None:
    """The planning prompt asks for a sweep when experiments must run: that is a plan, not a
    failed attempt (the dit-training story printed one, beside "Sweep … recorded")."""
    sim = new_project(tmp_path)
    (tmp_path / "train.py").write_text("print('ok')\n")
    sweep = (
        '{"name": "lr", "skill": {"kind": "python_script", "target": "train.py", "args": {}},'
        ' "parameters": {"lr": [0.1, 0.2]}, "max_runs": 2}'
    )
    sim.script = [say("Two runs will tell.", f"<sweep>{sweep}</sweep>")]
    result = sim.run(plan=True, once=True)
    assert (result.reason, result.iterations) == ("once", 1)
    assert sim.state().consecutive_failures == 0
    assert not [line for line in sim.out if line.startswith("⚠️")]


def test_a_failures_reason_comes_before_the_escalation_it_causes(tmp_path: Path) -> None:
    """Issue 24 item 13 (lines in the wrong order): "wild needs you … failed 3 times" came
    before the line saying why the third run failed."""
    sim = new_project(tmp_path)
    sim.script = [say("I am not sure what to do.")]
    sim.run(plan=True, once=False, max_iterations=3)
    told = [line for line in sim.out if line.startswith(("⚠️  Iteration 3", "📣"))]
    assert len(told) == 2
    assert told[0].startswith("⚠️  Iteration 3: the planning run added no task")
    assert told[1].startswith("📣 wild needs you (planning): planning failed 3 times")
