"""Answering an alert with a choice and ticking a task: the CLI's and the dashboard's core."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from wild.commands import answers, edits
from wild.commands.init import init_wild
from wild.errors import ConflictError, UsageError, WildError
from wild.paths import WildPaths
from wild.store.files import read_text

NOW = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)


@pytest.fixture
def paths(tmp_path: Path) -> WildPaths:
    found = WildPaths(tmp_path / ".wild")
    init_wild(found)
    return found


def _alert(paths: WildPaths, *choices: str) -> str:
    return edits.raise_alert(
        paths,
        severity="warning",
        source="job",
        alert_type="t",
        description="d",
        context={},
        choices=choices,
        now=NOW,
    )


def test_an_answer_is_the_resolution_line_the_loop_writes(paths: WildPaths) -> None:
    alert_id = _alert(paths, "rerun", "ignore")
    answers.answer_alert(paths, alert_id, "rerun", now=NOW)
    last = orjson.loads(paths.alerts.read_bytes().splitlines()[-1])
    assert (last["id"], last["status"], last["resolvedAt"]) == (
        alert_id,
        "resolved",
        "2026-02-08T10:00:00Z",
    )
    assert last["resolution"] == {"choice": "rerun", "note": None}


def test_an_answer_to_a_closed_alert_is_a_conflict(paths: WildPaths) -> None:
    alert_id = _alert(paths, "rerun")
    answers.answer_alert(paths, alert_id, "rerun", now=NOW)
    with pytest.raises(ConflictError, match="not open any more"):
        answers.answer_alert(paths, alert_id, "rerun", now=NOW)
    with pytest.raises(ConflictError, match="alert-nope"):
        answers.answer_alert(paths, "alert-nope", "rerun", now=NOW)


def test_only_the_offered_choices_are_taken(paths: WildPaths) -> None:
    alert_id = _alert(paths, "rerun", "ignore")
    with pytest.raises(UsageError, match="offers rerun, ignore; 'reboot' is not one of them"):
        answers.answer_alert(paths, alert_id, "reboot", now=NOW)
    free = _alert(paths)
    answers.answer_alert(paths, free, "done by hand", now=NOW)  # no choices: any answer


def test_a_tick_needs_the_status_the_caller_saw(paths: WildPaths) -> None:
    task_id = edits.add_task(paths, "Train", priority=2, depends_on=(), blocked_by=())
    answers.tick_task(paths, task_id, "complete", seen="todo")
    assert "- [x] [P2] task-001: Train" in read_text(paths.tasks)
    with pytest.raises(ConflictError, match=r"tasks.md:\d+: task-001 is complete now, not todo"):
        answers.tick_task(paths, task_id, "complete", seen="todo")
    answers.tick_task(paths, task_id, "todo", seen="complete")
    assert "- [ ] [P2] task-001: Train" in read_text(paths.tasks)
    with pytest.raises(WildError, match="no task task-009"):
        answers.tick_task(paths, "task-009", "complete", seen="todo")
