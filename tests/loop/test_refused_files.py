"""The loop respects a file the user made read-only: it says so once, never writes it, does
not redo the work it cannot record, goes on with the rest, and resumes once it is writable."""

from __future__ import annotations

from pathlib import Path

from tests.loop.harness import RESOLVED, TASK, add_alert, new_project, say
from wild.wake import WakeReason

READ_ONLY = "the file is read-only (mode 444)"


def test_a_read_only_tasks_file_waits_for_chmod_and_the_rest_goes_on(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] Build the UI\n- [ ] [P1] task-007: Train the model\n")
    tasks = sim.paths.tasks
    before = tasks.read_bytes()
    tasks.chmod(0o444)
    add_alert(sim.paths, "alert-1")
    sim.script = [say("Looked into it.", RESOLVED), say("Done.", TASK)]
    sim.queue_edit(tasks, lambda: tasks.chmod(0o644))
    result = sim.run()
    warnings = [line for line in sim.out if READ_ONLY in line]
    assert warnings == [
        f"⚠️  {tasks}: the file is read-only (mode 444), so wild will not replace it;"
        f" run `chmod u+w {tasks}` to let wild edit it"
    ]
    # While read-only: the alert was worked, no task was, and tasks.md was not touched
    # (the file event above is the chmod: it came when the loop had nothing else to do).
    worked = sim.worked_on()
    assert worked[0] == ("alert", "alert-1")
    assert [e["file"] for e in sim.events("write-refused")] == ["tasks"]
    # Once writable: ids written, both tasks done, each run once.
    assert result.reason == "complete"
    assert worked[1:] == [("task", "task-007"), ("task", "task-008")]
    text = tasks.read_text()
    assert text.startswith(before.decode().split("- [ ] Build")[0])
    assert "- [x] task-008: Build the UI" in text and "- [x] [P1] task-007:" in text


def test_a_file_made_read_only_while_an_agent_works_is_refused_once(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] task-001: A\n- [ ] task-002: B\n")
    tasks = sim.paths.tasks

    def lock_it(_request: object) -> None:
        tasks.chmod(0o444)

    sim.script = [[{"call": lock_it}, *say("Done.", TASK)], say("Done.", TASK)]
    sim.queue(lambda: (tasks.chmod(0o644), WakeReason("file", str(tasks)))[1])
    result = sim.run()
    assert result.reason == "complete"
    assert sum(READ_ONLY in line for line in sim.out) == 1
    # wild could not tick task-001 after its first run, so it ran again once writable.
    assert sim.worked_on() == [("task", "task-001"), ("task", "task-001"), ("task", "task-002")]
    assert len(sim.events("write-refused")) == 2  # the tick refused, then said once
