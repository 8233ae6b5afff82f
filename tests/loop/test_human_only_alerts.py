"""Issue 20 item 9: alerts only a human can resolve are never given to the agent.

A `policy-loosened` alert was handed to the real Claude Code CLI in two iterations in a row.
Every type in `HUMAN_ONLY` waits for the human, is announced once (terminal and the Notify
Command), and the other work goes on.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.cli_support import invoke
from tests.loop.harness import T0, TASK, new_project, notify_human, say
from wild.parsers.alert_types import HUMAN_ONLY
from wild.parsers.alerts import AlertIndex, make_alert, status_update
from wild.paths import WildPaths
from wild.selection import HUMAN_ONLY_WAIT, WorkSnapshot, select_work
from wild.store.alerts_log import append_alert, read_new


def human_only_alert(paths: WildPaths, alert_type: str) -> str:
    record = make_alert(
        now=T0,
        severity="warning",
        source="wild",
        type=alert_type,
        description="human-policy.md was loosened by hand; run `wild --approve @policy`",
    )
    append_alert(paths.alerts, record)
    return str(record["id"])


@pytest.mark.parametrize("alert_type", sorted(HUMAN_ONLY))
def test_selection_never_gives_a_human_only_alert_to_the_agent(
    tmp_path: Path, alert_type: str
) -> None:
    paths = new_project(tmp_path).paths
    alert_id = human_only_alert(paths, alert_type)
    alerts = AlertIndex(read_new(paths.alerts, None).entries).active()
    for status in ("pending", "in-progress", "escalated"):
        shown = tuple(replace(a, status=status) for a in alerts)
        selection = select_work(WorkSnapshot(alerts=shown))
        assert selection.kind == "blocked"
        assert [(i.kind, i.id, i.reason) for i in selection.queue] == [
            ("blocked", alert_id, HUMAN_ONLY_WAIT)
        ]


def test_the_loop_works_on_tasks_and_announces_a_human_only_alert_once(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n")
    notify_human(sim.paths)
    alert_id = human_only_alert(sim.paths, "policy-loosened")
    listing = invoke("--list-work", "--dir", str(sim.paths.root)).output
    assert f"blocked     {alert_id}" in listing and HUMAN_ONLY_WAIT in listing

    def approve() -> None:  # what `wild --approve @policy` appends
        alert = AlertIndex(read_new(sim.paths.alerts, None).entries).active()[0]
        append_alert(sim.paths.alerts, status_update(alert, "resolved", sim.clock.now()))

    sim.queue_edit(sim.paths.alerts, approve)  # the human, once the loop waits
    sim.script = [say(TASK), say(TASK)]
    result = sim.run()
    assert result.reason == "complete"
    # The agent got the tasks, never the alert.
    assert sim.worked_on() == [("task", "task-001"), ("task", "task-002")]
    told = [line for line in sim.out if alert_id in line and "Waiting for you" in line]
    assert len(told) == 1
    assert len([n for n in sim.notes if "only the human can resolve it" in n]) == 1


def test_what_was_told_of_a_resolved_human_only_alert_is_forgotten(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    alert_id = human_only_alert(sim.paths, "unapproved-command")

    def approve() -> None:
        alert = AlertIndex(read_new(sim.paths.alerts, None).entries).active()[0]
        append_alert(sim.paths.alerts, status_update(alert, "resolved", sim.clock.now()))

    sim.queue_edit(sim.paths.alerts, approve)
    sim.script = [say(TASK)]
    assert sim.run().reason == "complete"
    assert not [key for key in sim.book().notified if key.startswith(alert_id)]
