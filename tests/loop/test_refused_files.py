"""The loop respects a file the user made read-only: it says so once, never writes it, does
not redo the work it cannot record, goes on with the rest, and resumes once it is writable."""

from __future__ import annotations

from pathlib import Path

from tests.cli_support import invoke
from tests.loop.harness import RESOLVED, TASK, add_alert, new_project, say

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
    sim.queue_edit(tasks, lambda: tasks.chmod(0o644))
    result = sim.run()
    assert result.reason == "complete"
    assert sum(READ_ONLY in line for line in sim.out) == 1
    # wild could not tick task-001 after its first run, so it ran again once writable.
    assert sim.worked_on() == [("task", "task-001"), ("task", "task-001"), ("task", "task-002")]
    assert len(sim.events("write-refused")) == 2  # the tick refused, then said once


# -- an agent that deletes tasks.md or fills it with garbage ------------------------------------


def test_an_agent_deleting_tasks_md_loses_no_task_text(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] task-001: Keep this precious text\n- [ ] task-002: B\n")
    tasks = sim.paths.tasks
    good = tasks.read_text()
    # The agent wipes the file; the planning run that follows fills it with garbage.
    sim.script = [
        [{"call": lambda _request: tasks.unlink()}, *say("Cleaned up.")],
        [{"write_file": ".wild/tasks.md", "text": "I could not find any tasks \0\0"}],
    ]
    sim.run(max_iterations=3, plan=True)
    backups = sorted((sim.paths.root / "backup").iterdir())
    assert [b.read_text() for b in backups] == [good]
    said = [line for line in sim.out if "the last good version is kept in" in line]
    assert said == [
        f"⚠️  {tasks}: it was deleted; the last good version is kept in {backups[0]};"
        f" restore it with `cp {backups[0]} {tasks}`"
        f" (if that change was on purpose, `rm -r {sim.paths.root / 'backup'}` silences this)",
        f"⚠️  {tasks}: it holds binary data (NUL bytes); the last good version is kept in"
        f" {backups[0]}; restore it with `cp {backups[0]} {tasks}`"
        f" (if that change was on purpose, `rm -r {sim.paths.root / 'backup'}` silences this)",
    ]
    assert [e["kind"] for e in sim.events("file-damaged")] == ["file-damaged"] * 2


def test_status_names_the_copy_to_restore(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] task-001: Keep this precious text\n")
    sim.script = [
        [
            {
                "write_file": ".wild/tasks.md",
                "text": "- [ ] task-001: Keep this precious text\n- [ ] task-002: New\n",
            }
        ],
        [{"write_file": ".wild/tasks.md", "text": "Sure! I tidied up the file.\n"}],
    ]
    sim.run(max_iterations=2)
    backups = sorted((sim.paths.root / "backup").iterdir())
    assert len(backups) == 2 and "task-002: New" in backups[-1].read_text()
    status = invoke("--status", "--dir", str(sim.paths.root))
    assert (
        f"  {sim.paths.tasks}: it holds no task any more; the last good version is kept in"
        f" {backups[-1]}; restore it with `cp {backups[-1]} {sim.paths.tasks}`"
    ) in status.output
    assert invoke("--status", "--dir", str(sim.paths.root)).exit_code == 0
    sim.paths.tasks.write_bytes(backups[-1].read_bytes())
    assert "last good version" not in invoke("--status", "--dir", str(sim.paths.root)).output


def test_status_names_a_read_only_file(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] task-001: A\n")
    sim.paths.human.chmod(0o444)
    status = invoke("--status", "--dir", str(sim.paths.root))
    assert f"  {sim.paths.human}: the file is read-only (mode 444)" in status.output
