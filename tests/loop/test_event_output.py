"""The agent's structured report, `<event_output>{json}</event_output>`: its status decides the
outcome, its new events become tasks and alerts. In-process: no subprocess, no sleep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.loop.harness import new_project


def report(**fields: object) -> list[dict[str, object]]:
    return [{"print": f"<event_output>{json.dumps(fields)}</event_output>"}]


@pytest.mark.parametrize(
    ("status", "task", "failures", "awaiting"),
    [
        ("ok", "complete", {}, {}),
        ("retry", "in-progress", {}, {}),
        ("failed", "in-progress", {"task-001": 1}, {}),
        ("needs_human", "in-progress", {}, {"task-001": "the agent asked for your input"}),
    ],
)
def test_event_output_status_maps_to_the_outcome(
    tmp_path: Path, status: str, task: str, failures: dict[str, int], awaiting: dict[str, str]
) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [report(status=status, summary=f"said {status}")]
    result = sim.run(max_iterations=1)
    assert result.iterations == 1
    assert sim.task_status("task-001") == task
    assert (sim.book().failures, sim.book().awaiting) == (failures, awaiting)
    assert sim.state().consecutive_failures == (1 if status == "failed" else 0)
    assert sim.state().recent_summaries[0].endswith(f": said {status}")
    questions = [q for q in sim.human().inputs if q.status == "question"]
    assert len(questions) == (1 if status == "needs_human" else 0)


def test_event_output_new_events_become_tasks_and_alerts(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [
        report(
            status="ok",
            summary="split the work",
            new_events=[
                {"task": "Write the report", "priority": 1},
                "Plot the curves",
                {"alert": "disk almost full", "severity": "critical", "source": "df"},
                42,
            ],
            artifacts=["results/metrics.json"],
        )
    ]
    result = sim.run(max_iterations=1)
    assert result.iterations == 1
    assert sim.paths.tasks.read_text().endswith(
        "- [x] [P1] task-001: A\n"
        "- [ ] [P1] task-002: Write the report\n"
        "- [ ] [P2] task-003: Plot the curves\n"
    )
    raised = sim.alert_lines()[-1]
    assert (raised["severity"], raised["source"], raised["description"], raised["status"]) == (
        "critical",
        "df",
        "disk almost full",
        "pending",
    )
    assert sim.events("artifacts")[0]["artifacts"] == ["results/metrics.json"]
    assert sim.events("new-event-ignored")[0]["event"] == 42
