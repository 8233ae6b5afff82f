"""An alert's state is its latest line, and the human, jobs and agents append without wild's
lock. A line that lands after the loop read the file and before it acts (the human resolving
the alert the loop is about to escalate) must not be buried under wild's older view of it.

Seen as a flaky end-to-end test: the human's `rerun` arrived while the loop escalated the
alert, the loop's `escalated` line came after it and became the alert's state, and the loop
waited for an answer the human had already given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.loop import harness
from tests.loop.harness import T0, new_project
from wild.loop import Loop, LoopOptions
from wild.loop.model import AppendAlert, Ask
from wild.parsers import human as human_md
from wild.parsers.alerts import make_alert, status_update
from wild.policy.model import default_policy
from wild.store.alerts_log import append_alert
from wild.store.events_log import read_events

ALERT = "alert-20260208-100000-race"


def _loop_that_read_a_pending_alert(tmp_path: Path) -> Loop:
    sim = new_project(tmp_path)
    record = make_alert(
        now=T0,
        severity="warning",
        source="run-001",
        type="run-failed",
        description="run-001 failed",
        choices=("rerun", "ignore"),
        alert_id=ALERT,
    )
    append_alert(sim.paths.alerts, record)
    loop = Loop(
        sim.paths,
        LoopOptions(goal="g", agent="custom", agent_cmd="true"),
        clock=harness.TestClock(),
    )
    loop.files.alert_log.refresh()  # the loop's read, on which it decides to escalate
    return loop


def _escalate(loop: Loop) -> None:
    alert = loop.files.alert_log.index.get(ALERT)
    assert alert is not None and alert.status == "pending"
    policy = default_policy()
    loop.effects.perform(AppendAlert(status_update(alert, "escalated", T0)), policy, T0, None)
    loop.effects.perform(
        Ask(ALERT, "Confirm the alert", "[WARNING] run-001", None), policy, T0, None
    )


def _latest(loop: Loop) -> dict[str, Any]:
    records = [orjson.loads(line) for line in loop.paths.alerts.read_bytes().splitlines()]
    latest: dict[str, Any] = [r for r in records if r["id"] == ALERT][-1]
    return latest


def _questions(loop: Loop) -> list[str]:
    doc = human_md.parse(loop.paths.human.read_text())
    return [entry.status for entry in doc.inputs if entry.status == "question"]


def test_the_humans_answer_after_the_loops_read_stays_the_alerts_state(tmp_path: Path) -> None:
    loop = _loop_that_read_a_pending_alert(tmp_path)
    read = loop.files.alert_log.index.get(ALERT)
    assert read is not None
    answer = status_update(read, "resolved", T0, resolution={"choice": "rerun"})
    append_alert(loop.paths.alerts, answer)  # the human, between the read and the effect
    _escalate(loop)
    latest = _latest(loop)
    assert latest["status"] == "resolved"
    assert latest["resolution"] == {"choice": "rerun"}
    assert _questions(loop) == []  # nor asked about what was just answered
    skipped = [e for e in read_events(loop.paths.events)[0] if e["kind"] == "alert-update-skipped"]
    assert [e["alert"] for e in skipped] == [ALERT, ALERT]


def test_with_no_one_else_writing_the_loop_escalates_and_asks(tmp_path: Path) -> None:
    loop = _loop_that_read_a_pending_alert(tmp_path)
    _escalate(loop)  # its own escalated line does not stop its own question
    assert _latest(loop)["status"] == "escalated"
    assert _questions(loop) == ["question"]
    assert not [e for e in read_events(loop.paths.events)[0] if e["kind"] == "alert-update-skipped"]
