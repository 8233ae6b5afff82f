"""The real `python -m wild "GOAL" --agent-cmd …` process: file events from other processes
wake it, control requests and signals reach it, and a killed loop resumes where it stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import timedelta

import pytest

from tests.loop_processes import T0, WAIT_S, Wild, alive, wait_gone
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import make_alert
from wild.store.alerts_log import append_alert, read_new

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def gated_task(wild: Wild) -> None:
    wild.paths.tasks.write_text("# Tasks\n\n- [ ] [P1] task-001: Train\n  - blockedBy: gate\n")
    wild.paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")


def test_an_alert_from_another_process_and_a_rename_save_wake_the_idle_loop(wild: Wild) -> None:
    gated_task(wild)
    proc = wild.start()
    wild.wait_for("the loop to idle", lambda: "⏳ Waiting (gate)" in wild.output())

    alert_id = wild.cli(
        "--alert",
        "--severity",
        "warning",
        "--source",
        "job-7",
        "--type",
        "crash",
        "--description",
        "job 7 died",
    )
    wild.wait_for("the alert", lambda: f"✅ Alert resolved: {alert_id}" in wild.output())

    # An editor's save: write a temporary file beside human.md, then rename it over.
    text = wild.paths.human.read_text()
    text += "\n## [PENDING] 2026-02-08T12:00:00Z\n### Input:\nAlso plot the loss.\n\n---\n"
    temp = wild.paths.root / ".human.md.4913.tmp"
    temp.write_text(text)
    os.replace(temp, wild.paths.human)
    wild.wait_for("the human input", lambda: "✅ Human input" in wild.output())

    wild.cli("--satisfy", "gate")
    assert proc.wait(WAIT_S) == 0, wild.output()
    assert [(n, kind, work) for n, kind, work, _ in wild.agent_runs()] == [
        ("1", "alert", alert_id),
        ("2", "human-input", "2026-02-08T12:00:00Z"),
        ("3", "task", "task-001"),
        ("4", "planning", "planning"),  # the agent confirms the goal is met
    ]
    inputs = human_md.parse(wild.paths.human.read_text()).inputs
    assert [h.status for h in inputs] == ["processed"]
    assert "wild stopped: all work complete (4 iterations)" in wild.output()


def test_pause_resume_and_stop_from_another_process_reach_the_running_loop(wild: Wild) -> None:
    wild.paths.tasks.write_text(
        "# Tasks\n\n- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n- [ ] [P3] task-003: C\n"
    )
    wild.hold("task-001")
    wild.hold("task-003", "spawn")
    proc = wild.start()
    wild.wait_for("task-001 to start", lambda: ("task", "task-001") in wild.worked_on())

    wild.cli("--pause")  # the running agent may finish; nothing new starts
    wild.go("task-001")
    wild.wait_for("the pause", lambda: "⏸️  paused" in wild.output())
    assert wild.worked_on() == [("task", "task-001")]
    assert json.loads(wild.paths.state.read_text())["paused"] is True

    wild.cli("--resume")
    grandchild = wild.tmp / "grandchild.pid"
    wild.wait_for("task-003 to start its job", grandchild.exists)
    assert wild.worked_on() == [("task", "task-001"), ("task", "task-002"), ("task", "task-003")]

    wild.cli("--stop")  # kills the running agent's whole process group
    assert proc.wait(WAIT_S) == 130, wild.output()
    agent_pid = wild.agent_runs()[-1][3]
    assert not alive(agent_pid)
    assert not alive(int(grandchild.read_text()))
    statuses = [t.status for t in tasks_md.parse(wild.paths.tasks.read_text()).tasks]
    assert statuses == ["complete", "complete", "in-progress"]
    assert "wild stopped: stopped on request (3 iterations)" in wild.output()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_loop_kills_the_agent_group_and_leaves_valid_files(
    wild: Wild, signum: signal.Signals
) -> None:
    wild.paths.tasks.write_text("# Tasks\n\n- [ ] [P1] task-001: Train\n")
    append_alert(
        wild.paths.alerts,
        make_alert(
            now=T0,
            severity="info",
            source="job",
            type="note",
            description="FYI",
            alert_id="alert-1",
        ),
    )
    wild.hold("alert-1", "spawn")
    proc = wild.start()
    grandchild = wild.tmp / "grandchild.pid"
    wild.wait_for("the agent to start its job", grandchild.exists)

    proc.send_signal(signum)
    assert proc.wait(WAIT_S) == 130, wild.output()
    assert not alive(wild.agent_runs()[0][3])
    assert not alive(int(grandchild.read_text()))

    state = json.loads(wild.paths.state.read_text())
    assert state["active"] is False
    assert state["currentWork"]["id"] == "alert-1"
    tasks = tasks_md.parse(wild.paths.tasks.read_text())
    alerts = read_new(wild.paths.alerts, None)
    queue = human_md.parse(wild.paths.human.read_text())
    assert (tasks.problems, alerts.problems, queue.problems) == ((), (), ())
    assert [a["status"] for a in map(json.loads, wild.paths.alerts.read_text().splitlines())] == [
        "pending",
        "in-progress",  # stays in progress: the next loop resumes it first
    ]
    assert "wild stopped: stopped on request (1 iteration)" in wild.output()


def test_a_killed_loop_resumes_with_its_in_progress_alert_first(wild: Wild) -> None:
    for n in (1, 2):
        record = make_alert(
            now=T0 + timedelta(minutes=n),
            severity="warning",
            source="job",
            type="crash",
            description=f"job {n} died",
            alert_id=f"alert-{n}",
        )
        append_alert(wild.paths.alerts, record)
    wild.hold("alert-1")
    proc = wild.start()
    wild.wait_for("alert-1 to start", lambda: ("alert", "alert-1") in wild.worked_on())
    proc.kill()  # kill -9: no chance to clean up
    proc.wait()
    agent = wild.agent_runs()[0][3]
    wait_gone(agent)  # it dies with its loop

    # A critical alert arrives while no loop runs: pending critical ranks below in-progress.
    critical = make_alert(
        now=T0 + timedelta(minutes=3),
        severity="critical",
        source="job",
        type="crash",
        description="job 3 died",
        alert_id="alert-3",
    )
    append_alert(wild.paths.alerts, critical)
    (wild.tmp / "hold-alert-1").unlink()
    resumed = wild.start()
    assert resumed.wait(WAIT_S) == 0, wild.output()
    assert wild.worked_on() == [
        ("alert", "alert-1"),
        ("alert", "alert-1"),
        ("alert", "alert-3"),
        ("alert", "alert-2"),
        ("planning", "planning"),
    ]
    # The killed run used up iteration 1 and was no attempt of the agent's.
    assert [n for n, _, _, _ in wild.agent_runs()] == ["1", "2", "3", "4", "5"]
    lines = [json.loads(line) for line in wild.paths.alerts.read_text().splitlines()]
    attempts = [
        line["context"]["attempt"]
        for line in lines
        if line["id"] == "alert-1" and line["status"] == "in-progress"
    ]
    assert attempts == [1, 1]
    assert "The last loop was killed during iteration 1 (alert alert-1)" in wild.output()


def test_a_second_loop_on_the_same_folder_refuses_to_start(wild: Wild) -> None:
    gated_task(wild)
    first = wild.start()
    wild.wait_for("the loop to idle", lambda: "⏳ Waiting (gate)" in wild.output())
    second = subprocess.run(
        [sys.executable, "-m", "wild", "Ship the model", "--agent-cmd", "true"],
        cwd=wild.paths.project,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert second.returncode == 1
    assert second.stderr.startswith(
        f"Error: .wild: another wild loop is running on this folder (pid {first.pid} on "
    )
    assert "stop it with `wild --stop`" in second.stderr
    assert wild.agent_runs() == []  # the refused loop ran nothing
    first.kill()  # kill -9: the kernel drops the lock with its holder
    first.wait()
    wild.cli("--satisfy", "gate")
    again = wild.start()
    assert again.wait(WAIT_S) == 0, wild.output()
