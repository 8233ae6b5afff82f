"""Where a SIGKILL can leave tasks.md now that a run's tick is written with the next task's
mark, in one write (docs/reliability.md, "What a restart finds between two agent runs").
The kill is taken at exactly each instant: the bytes of state.json, tasks.md and events.log
at that moment, and the iteration files that existed then, are what a SIGKILL there leaves
on disk; a new loop starts from them. The state the holding removed is the tick on disk
without the next mark; since the judgment is written with the next run's record, the
state.json beside either point holds the finished run's record, not its judgment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_loop import TASK, project, run, say, script
from wild.loop import effects
from wild.loop.agent_record import AGENT_RUN
from wild.parsers.state import LoadedState, parse_state
from wild.parsers.tasks import parse as parse_tasks
from wild.paths import WildPaths
from wild.store import files

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

TASKS = "- [ ] [P1] task-001: Train\n- [ ] [P2] task-002: Test\n"


def _statuses(paths: WildPaths) -> list[str]:
    return [task.status for task in parse_tasks(paths.tasks.read_text()).tasks]


def _left_by_a_kill(
    paths: WildPaths, monkeypatch: pytest.MonkeyPatch, *, after_the_write: bool
) -> dict[str, Any]:
    """Run two iterations; what the disk held just before (or just after) the one tasks.md
    write that ticks task-001 and marks task-002."""
    left: dict[str, Any] = {}
    update = files.update_text

    def spying(path: Path, edit: Any, lock: Path, **kwargs: Any) -> str:
        def snapshot() -> None:
            left.update(
                state=paths.state.read_bytes(),
                tasks=paths.tasks.read_bytes(),
                events=paths.events.read_bytes(),
                logs=sorted(p.name for p in paths.logs.iterdir()),
            )

        ticks_and_marks = path == paths.tasks and not left and "[x]" in edit(path.read_text())
        if ticks_and_marks and not after_the_write:
            snapshot()
        text = update(path, edit, lock, **kwargs)
        if ticks_and_marks and after_the_write:
            snapshot()
        return text

    monkeypatch.setattr(effects, "update_text", spying)
    run(paths, max_iterations=2)
    monkeypatch.setattr(effects, "update_text", update)
    return left


def _restore(paths: WildPaths, left: dict[str, Any]) -> None:
    """The project as the SIGKILL left it: later iterations' files never existed."""
    paths.state.write_bytes(left["state"])
    paths.tasks.write_bytes(left["tasks"])
    paths.events.write_bytes(left["events"])
    for name in {p.name for p in paths.logs.iterdir()} - set(left["logs"]):
        (paths.logs / name).unlink()


@pytest.mark.parametrize("after_the_write", [False, True], ids=["before", "after"])
def test_a_kill_around_the_one_tasks_md_write_of_an_iteration_loses_no_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after_the_write: bool
) -> None:
    """Before the write: state.json holds run 1's record (its judgment goes to disk with
    run 2's record) and tasks.md task-001 still in progress; the restart runs task-001 again
    (work is at least once). After it: task-001 ticked and task-002 marked, state.json still
    run 1's record, no record of run 2; the restart reports run 1 interrupted and runs
    task-002. Either way every task ends done and no iteration number is used twice. The
    write is made at run 2's gate (its agent spawned, waiting for the go): run 2's prompt
    is there, its log is not (a run that never began: the restart takes its name again)."""
    paths = project(tmp_path, TASKS)
    script(monkeypatch, tmp_path, say("Done.", TASK))
    left = _left_by_a_kill(paths, monkeypatch, after_the_write=after_the_write)
    assert left["logs"] == ["iteration-1.log", "iteration-1.prompt.md", "iteration-2.prompt.md"]
    first_log = (paths.logs / "iteration-1.log").read_bytes()
    on_disk = parse_tasks(left["tasks"].decode()).tasks
    state = parse_state(left["state"], "state.json")
    assert isinstance(state, LoadedState)
    assert state.state.extra[AGENT_RUN]["iteration"] == 1  # run 1's record, not yet judged
    if after_the_write:
        assert [t.status for t in on_disk] == ["complete", "in-progress"]
    else:
        assert [t.status for t in on_disk] == ["in-progress", "todo"]
    _restore(paths, left)

    result, out = run(paths, max_iterations=5)

    assert result.reason == "complete", out
    assert _statuses(paths) == ["complete", "complete"]
    logs = [p.name for p in paths.logs.iterdir() if p.name.endswith(".log")]
    runs = 2 if after_the_write else 3  # before: task-001 once more (at least once)
    assert len(logs) == runs, logs
    # A killed loop uses up a number; none is given twice (that would be `iteration-N.2.log`).
    assert all(name.count(".") == 1 for name in logs), logs
    assert (paths.logs / "iteration-1.log").read_bytes() == first_log
