"""Which project files each iteration changed (the agent-end record), and the stall when clean
runs change none: in-process, on a plain folder; the git side is tests/loop/test_changes.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loop.harness import TASK, new_project, say, set_policy
from wild.loop import changes

RETRY = [{"print": '<event_output>{"status": "retry", "summary": "looked again"}</event_output>'}]


def test_the_agent_end_record_names_the_project_files_the_run_changed(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "old.py").write_text("x = 1\n")
    (tmp_path / "node_modules").mkdir()  # skipped: not the project's own files
    sim.script = [
        [
            {"write_file": "src/model.py", "text": "print('hi')\n"},
            {"append_file": "src/old.py", "text": "y = 2\n"},
            {"write_file": "node_modules/dep.js", "text": "x\n"},
            *say(TASK),
        ],
        say(TASK),  # edits only .wild/tasks.md (the loop's state folder): no project file
    ]
    sim.run()
    first, second = sim.events("agent-end")
    assert (first["files_changed"], first["files_changed_count"]) == (
        ["src/model.py", "src/old.py"],
        2,
    )
    assert (second["files_changed"], second["files_changed_count"]) == ([], 0)


def test_clean_runs_that_change_no_file_pause_the_loop_and_ask_the_human(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [RETRY, RETRY, RETRY, say(TASK)]
    sim.queue_request("resume")  # the human looked, and lets it go on
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 4)
    (stall,) = sim.events("stalled")
    assert (stall["files_changed"], stall["runs"]) == (0, 3)
    question = sim.human().inputs[0]
    assert question.content.startswith(
        "3 iterations in a row changed no file in the project and finished nothing"
    )
    assert any(line.startswith("⏸️  Paused: 3 iterations in a row changed no") for line in sim.out)
    assert sim.watcher is not None and sim.watcher.timeouts == [None]  # paused: no spinning


def test_a_run_that_changes_a_file_starts_the_count_again(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    write = [{"write_file": "notes.txt", "text": "progress\n"}, *RETRY]
    sim.script = [RETRY, RETRY, write, RETRY, RETRY, say(TASK)]
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 6)
    assert sim.events("stalled") == []
    counts = [e["files_changed_count"] for e in sim.events("agent-end")]
    assert counts == [0, 0, 1, 0, 0, 0]


def test_failed_runs_are_not_file_stalls(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    set_policy(sim.paths, repeated_failures="never")
    crashes = [[*say(f"Error {n}"), {"exit": 1}] for n in range(3)]  # the failure rules' job
    sim.script = [*crashes, say(TASK)]
    sim.run()
    assert sim.events("stalled") == []
    assert [e["files_changed"] for e in sim.events("agent-end")] == [[], [], [], []]


def test_each_run_starts_from_the_files_the_run_before_left_and_a_wait_looks_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Back to back, the loop writes only in `.wild/` between two runs: the files the first
    # run left are where the next starts (one look per run, not two). A wait between them
    # (the stall's pause, until the human resumes) is the outside world's time: looked anew.
    looks: list[Path] = []
    snapshot = changes.snapshot

    def counted(project: Path, state_root: Path) -> changes.Snapshot:
        looks.append(project)
        return snapshot(project, state_root)

    monkeypatch.setattr(changes, "snapshot", counted)
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [RETRY, RETRY, RETRY, say(TASK)]
    sim.queue_request("resume")
    result = sim.run()
    assert (result.reason, result.iterations) == ("complete", 4)
    # Runs 1-3 back to back: 1 + 3 looks; the pause, then run 4: 2 more (not 8 in all).
    assert len(looks) == 6
