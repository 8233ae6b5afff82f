"""A task's own check (`- check: <command>`): TASK_COMPLETE, or a box the agent ticked, counts
only when the command passes; otherwise the box goes back to [/] and the next prompt says why."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.loop.harness import TASK, new_project, say
from wild.barriers.approvals import approve

CHECK = "test -s out.txt"
TASKS = f"- [ ] [P1] task-001: Write out.txt\n  - check: {CHECK}\n- [ ] [P2] task-002: Next\n"


def tick(task_id: str) -> dict[str, str]:
    return {
        "replace_in_file": ".wild/tasks.md",
        "old": f"- [/] [P1] {task_id}",
        "new": f"- [x] [P1] {task_id}",
    }


def write_out() -> dict[str, str]:
    return {"write_file": "out.txt", "text": "done\n"}


def test_task_complete_counts_only_when_the_check_passes(tmp_path: Path) -> None:
    sim = new_project(tmp_path, TASKS)
    approve(sim.paths.project, CHECK)
    sim.script = [say("Done!", TASK), [write_out(), *say("Now really done.", TASK)], say(TASK)]
    result = sim.run()
    assert result.reason == "complete"
    assert sim.worked_on() == [("task", "task-001"), ("task", "task-001"), ("task", "task-002")]
    assert "task task-001 is not done: its check failed (exit 1)" in sim.prompt(2)
    checks = [(e["task"], e["passed"]) for e in sim.events("task-check")]
    assert checks == [("task-001", False), ("task-001", True)]
    assert sim.task_status("task-001") == "complete"


def test_a_box_the_agent_ticked_itself_goes_back_when_the_check_fails(tmp_path: Path) -> None:
    sim = new_project(tmp_path, TASKS)
    approve(sim.paths.project, CHECK)
    seen: list[str] = []

    def looks_at_its_task(request: Any) -> None:
        request.on_start(os.getpid())  # the runner's gate: what the loop writes before a go
        seen.append(sim.task_status("task-001"))

    sim.script = [
        [tick("task-001"), *say("Ticked it.")],
        [
            {"call": looks_at_its_task},
            write_out(),
            *say(TASK),
        ],
        say(TASK),
    ]
    result = sim.run()
    assert result.reason == "complete"
    assert seen == ["in-progress"]  # set back to [/] before the next run
    assert (
        "- [x] [P1] task-001: Write out.txt\n  - check: test -s out.txt\n"
        in sim.paths.tasks.read_text()
    )


def test_deleting_the_check_line_does_not_skip_it(tmp_path: Path) -> None:
    sim = new_project(tmp_path, TASKS)
    approve(sim.paths.project, CHECK)
    drop = {"replace_in_file": ".wild/tasks.md", "old": f"  - check: {CHECK}\n", "new": ""}
    sim.script = [[drop, *say(TASK)], say("stuck")]
    sim.run(max_iterations=1)
    assert [(e["task"], e["passed"]) for e in sim.events("task-check")] == [("task-001", False)]
    assert sim.task_status("task-001") == "in-progress"


def test_an_unapproved_check_asks_the_human_instead_of_failing_the_agent(tmp_path: Path) -> None:
    sim = new_project(tmp_path, TASKS)
    sim.script = [[write_out(), *say(TASK)], say(TASK)]
    sim.queue_request("stop")
    result = sim.run()
    assert result.reason == "stopped"
    assert sim.worked_on() == [("task", "task-001"), ("task", "task-002")]
    assert sim.task_status("task-001") == "in-progress"
    assert sim.book().awaiting["task-001"] == "the check of task-001 awaits your approval"
    assert [e.status for e in sim.human().inputs] == ["question"]


def test_approving_the_check_lets_the_task_finish(tmp_path: Path) -> None:
    sim = new_project(tmp_path, TASKS)
    sim.script = [[write_out(), *say(TASK)], say(TASK), say(TASK)]
    sim.queue_edit(sim.paths.human, lambda: approve(sim.paths.project, CHECK))
    sim.queue_request("recheck")  # what `wild --approve task-001` asks of the running loop
    result = sim.run()
    assert result.reason == "complete"
    assert [(e["task"], e["passed"]) for e in sim.events("task-check")] == [
        ("task-001", False),
        ("task-001", True),
    ]
    assert sim.task_status("task-001") == "complete"
