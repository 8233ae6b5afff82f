"""Taking over from a killed loop: the pure decisions, and the names of logs."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from tests.loop.harness import loop_options
from wild.commands.init import init_wild
from wild.liveness import Liveness
from wild.loop.agent_record import AGENT_RUN, AgentRunRecord, ended, interrupted, started
from wild.loop.iteration import fresh_name
from wild.loop.recovery import group_to_kill, notice, stray_temp_files, take_over, taken_over
from wild.parsers.process_id import ProcessId
from wild.parsers.state import LoopState
from wild.paths import WildPaths

RECORD = AgentRunRecord(7, "task", "task-003", "ab12cd.7")
AGENT = ProcessId(4242, "host", start_ticks=99, boot_id="b")


def test_a_run_record_survives_state_json() -> None:
    state = started(LoopState(iteration=6, extra={"failures": {"x": 1}}), RECORD)
    assert state.extra[AGENT_RUN] == {
        "iteration": 7,
        "workType": "task",
        "workId": "task-003",
        "runId": "ab12cd.7",
    }
    assert interrupted(state) == RECORD
    assert ended(state).extra == {"failures": {"x": 1}}  # other records untouched


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "task-003",
        {"iteration": "7", "workType": "task", "workId": "t", "runId": "r"},
        {"iteration": True, "workType": "task", "workId": "t", "runId": "r"},
        {"iteration": 0, "workType": "task", "workId": "t", "runId": "r"},
        {"iteration": 7, "workType": "task", "workId": "", "runId": "r"},
        {"iteration": 7, "workType": "task", "workId": "t"},
    ],
)
def test_a_hand_edited_run_record_is_no_record(raw: object) -> None:
    assert interrupted(LoopState(extra={AGENT_RUN: raw})) is None


@pytest.mark.parametrize(
    ("seen", "group"),
    [
        ("running", 4242),
        ("gone", 4242),  # the leader died; members of its group may live on
        ("reused", None),  # the number is another process's now
        ("elsewhere", None),  # another host's process
    ],
)
def test_only_the_killed_loops_own_agent_group_is_killed(seen: Liveness, group: int | None) -> None:
    assert group_to_kill(AGENT, seen) == group
    assert group_to_kill(None, seen) is None


def test_a_running_pid_without_a_start_time_may_be_anyones() -> None:
    unsure = ProcessId(4242, "host")
    assert group_to_kill(unsure, "running") is None
    assert group_to_kill(unsure, "gone") == 4242


def test_the_interrupted_runs_iteration_number_is_used_up_and_not_counted() -> None:
    state = LoopState(iteration=6, consecutive_failures=0, agent_process=AGENT)
    after = taken_over(started(state, RECORD), RECORD)
    assert after.iteration == 7  # the next run is 8
    assert after.consecutive_failures == 0  # the loop failed, not the agent
    assert after.agent_process is None
    assert AGENT_RUN not in after.extra
    assert after.recent_summaries == (
        "iteration 7: task task-003 → interrupted (the loop was killed; not counted as an attempt)",
    )


def test_iteration_numbers_never_go_back() -> None:
    assert taken_over(LoopState(iteration=9), RECORD).iteration == 9


def test_without_an_interrupted_run_only_the_agent_is_forgotten() -> None:
    after = taken_over(LoopState(iteration=3, agent_process=AGENT), None)
    assert (after.iteration, after.agent_process, after.recent_summaries) == (3, None, ())


def test_stray_temp_files_of_state_json_are_found(tmp_path: Path) -> None:
    for name in (".state.json.x1y2.tmp", ".state.json.tmp", ".tasks.md.a.tmp", "state.json"):
        (tmp_path / name).write_text("")
    assert [p.name for p in stray_temp_files(tmp_path, "state.json")] == [".state.json.x1y2.tmp"]


def test_a_loops_start_removes_the_swaps_a_kill_cut_short(tmp_path: Path) -> None:
    """state.json's and tasks.md's temp files (a new version before its swap, or an old one
    it displaced, `files.remove_displaced`) are removed as the next loop takes over; another
    file's and the files themselves stay."""
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    strays = (".state.json.a1.tmp", ".tasks.md.b2.tmp", ".human.md.c3.tmp")
    for name in strays:
        (paths.root / name).write_text("an old version")
    before = sorted(path.name for path in paths.root.iterdir())
    take_over(paths, LoopState(), lambda line: None, loop_options())
    after = sorted(path.name for path in paths.root.iterdir())
    assert sorted(set(before) - set(after)) == [".state.json.a1.tmp", ".tasks.md.b2.tmp"]


def test_a_held_wild_lock_keeps_the_tasks_md_temp_files_and_holds_nothing_up(
    tmp_path: Path,
) -> None:
    """tasks.md's temp files may be a command's write in progress: removed only under the
    wild lock, and with that lock held by another (an agent's doing) the loop starts at once
    and leaves them for a later start."""
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    (paths.root / ".tasks.md.b2.tmp").write_text("a command's write")
    with open(paths.lock, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        take_over(paths, LoopState(), lambda line: None, loop_options())
    assert (paths.root / ".tasks.md.b2.tmp").exists()


def test_a_log_is_never_overwritten(tmp_path: Path) -> None:
    assert fresh_name(tmp_path, 3) == "iteration-3"
    (tmp_path / "iteration-3.log").write_text("the first run")
    assert fresh_name(tmp_path, 3) == "iteration-3.2"
    (tmp_path / "iteration-3.2.prompt.md").write_text("a prompt, its log not started")
    assert fresh_name(tmp_path, 3) == "iteration-3.2"  # its run never began: no run had 3.2
    (tmp_path / "iteration-3.2.prompt.md").unlink()
    (tmp_path / "iteration-3.2.prompt.md").symlink_to(tmp_path / "elsewhere")
    assert fresh_name(tmp_path, 3) == "iteration-3.3"  # a link: never written through
    (tmp_path / "iteration-3.3.prompt.md").mkdir()
    assert fresh_name(tmp_path, 3) == "iteration-3.4"


def test_the_interrupted_note_keeps_the_loops_context_window() -> None:
    earlier = LoopState(iteration=6, recent_summaries=("a", "b", "c"))
    assert taken_over(earlier, RECORD, keep=2).recent_summaries == (
        "c",
        "iteration 7: task task-003 → interrupted (the loop was killed; not counted as an attempt)",
    )
    assert taken_over(earlier, RECORD, keep=0).recent_summaries == ()


def test_the_killed_loop_notice_names_planning_once() -> None:
    record = AgentRunRecord(1, "planning", "planning", "ab12cd.1")
    assert notice(record) == (
        "⚠️  The last loop was killed during iteration 1 (planning); its agent was stopped and"
        " the work starts again"
    )
    assert "(task task-003)" in notice(RECORD)
