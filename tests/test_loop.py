"""The loop in-process with real agent processes: every work type, every promise signal,
escalation, failures, limits, timeouts, idling without spinning."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from wild import control
from wild.agents.runner import AgentRequest, AgentRun, run_agent
from wild.barriers.approvals import approve
from wild.clock import SystemClock
from wild.commands import edits
from wild.commands.init import init_wild
from wild.loop import Loop, LoopOptions, LoopResult
from wild.loop.bookkeeping import Bookkeeping
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import make_alert
from wild.paths import WildPaths
from wild.store.alerts_log import append_alert
from wild.store.events_log import read_events
from wild.store.state_file import load_state

pytestmark = pytest.mark.timeout(60)  # a loop that fails to end must fail the test, not hang

FAKE = f"{sys.executable} -m wild.agents.fake_agent"
T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)
TASK = "<promise>TASK_COMPLETE</promise>"
RESOLVED = "<promise>ALERT_RESOLVED</promise>"
PROCESSED = "<promise>HUMAN_INPUT_PROCESSED</promise>"
MONITORED = "<promise>MONITORING_COMPLETE</promise>"
Actions = list[dict[str, Any]]


# -- helpers --------------------------------------------------------------------------------


def project(tmp_path: Path, tasks: str = "") -> WildPaths:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    paths.tasks.write_text("# Wild Loop Tasks\n\n" + tasks)
    set_policy(paths, progress_reports="None")
    return paths


def set_policy(paths: WildPaths, **settings: str) -> None:
    """Change `- **Name:** value` lines of human-policy.md (added under Settings if missing)."""
    text = paths.policy.read_text()
    for key, value in settings.items():
        label = key.replace("_", " ").title()
        line = f"- **{label}:** {value}"
        pattern = re.compile(rf"^- \*\*{re.escape(label)}:\*\* .*$", re.M)
        if pattern.search(text):
            text = pattern.sub(line, text, count=1)
        else:
            text = text.replace("- **Command Approval:**", f"{line}\n- **Command Approval:**", 1)
        if key == "notify_command":
            approve(paths.project, value)  # as the human would with `wild --approve @notify`
    paths.policy.write_text(text)


def script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *iterations: Actions) -> None:
    """The fake agent plays `iterations` in order, one per run (the last one repeats)."""
    path = tmp_path / "agent-script.json"
    path.write_text(json.dumps({"iterations": list(iterations)}))
    monkeypatch.setenv("WILD_FAKE_SCRIPT", str(path))


def say(*lines: str) -> Actions:
    return [{"print": line} for line in lines]


def notify_command(tmp_path: Path) -> str:
    """A Notify Command that appends each message, then a `===` line, to notes.txt."""
    return f"{{ cat; echo; echo ===; }} >> {tmp_path / 'notes.txt'}"


def notes(tmp_path: Path) -> list[str]:
    path = tmp_path / "notes.txt"
    text = path.read_text() if path.exists() else ""
    return [part.strip() for part in text.split("===") if part.strip()]


def run(
    paths: WildPaths,
    *,
    out: Callable[[str], None] | None = None,
    runner: Callable[[AgentRequest], AgentRun] = run_agent,
    clock: Any = None,
    **options: Any,
) -> tuple[LoopResult, list[str]]:
    lines: list[str] = []

    def record(line: str) -> None:
        lines.append(line)
        if out is not None:
            out(line)

    loop = Loop(paths, loop_options(**options), out=record, runner=runner, clock=clock)
    return loop.run(), lines


def loop_options(**options: Any) -> LoopOptions:
    settings: dict[str, Any] = {
        "goal": "Ship the model",
        "agent": "custom",
        "agent_cmd": FAKE,
        "safety_rescan_s": 3600.0,
        "max_iterations": 12,
        "plan": False,  # planning has its own tests (tests/loop/test_planning.py)
    }
    settings.update(options)
    return LoopOptions(**settings)


def worked_on(paths: WildPaths) -> list[tuple[str, str]]:
    events, _ = read_events(paths.events)
    return [(e["work_type"], e["work_id"]) for e in events if e["kind"] == "agent-start"]


def event_kinds(paths: WildPaths, kind: str) -> list[dict[str, Any]]:
    events, _ = read_events(paths.events)
    return [e for e in events if e["kind"] == kind]


def alert_lines(paths: WildPaths) -> list[dict[str, Any]]:
    return [json.loads(line) for line in paths.alerts.read_text().splitlines() if line.strip()]


def add_alert(paths: WildPaths, alert_id: str, severity: str = "warning", **extra: Any) -> None:
    record = make_alert(
        now=T0,
        severity=severity,  # type: ignore[arg-type]
        source="train-job-1",
        type="loss-spike",
        description=f"{alert_id}: loss jumped to 9.8",
        alert_id=alert_id,
        **extra,
    )
    append_alert(paths.alerts, record)


def human(paths: WildPaths) -> human_md.HumanQueue:
    return human_md.parse(paths.human.read_text())


def task_status(paths: WildPaths, task_id: str) -> str:
    task = tasks_md.find(tasks_md.parse(paths.tasks.read_text()), task_id)
    assert task is not None
    return task.status


def state_of(paths: WildPaths) -> Any:
    return load_state(paths.state).state


def book(paths: WildPaths) -> Bookkeeping:
    return Bookkeeping.from_extra(state_of(paths).extra)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def prompt(paths: WildPaths, iteration: int) -> str:
    return (paths.logs / f"iteration-{iteration}.prompt.md").read_text()


class StepClock:
    """A wall clock the test moves: every agent run takes `step` of it."""

    def __init__(self, step: timedelta) -> None:
        self.at = T0
        self.step = step

    def now(self) -> datetime:
        return self.at

    def monotonic(self) -> float:
        return time.monotonic()

    def runner(self, request: AgentRequest) -> AgentRun:
        result = run_agent(request)
        self.at += self.step
        return result


# -- each kind of work and its promise ------------------------------------------------------


def test_human_input_processed_is_marked_with_a_processed_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path)
    key = edits.add_human_input(paths, "Use batch size 32", urgent=False, now=T0)
    script(monkeypatch, tmp_path, [{"record": "seen.json"}, *say("Done.", PROCESSED)])
    result, out = run(paths)
    assert (result.reason, result.iterations) == ("complete", 1)
    entry = human(paths).inputs[0]
    assert (entry.key, entry.status) == (key, "processed")
    text = paths.human.read_text()
    assert re.search(
        r"### Processed:\n\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ - processed by the agent "
        r"\(iteration-1\.log\)\n\n---",
        text,
    )
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["env"]["WILD_WORK_TYPE"] == "human-input"
    assert seen["env"]["WILD_WORK_ID"] == key
    assert seen["env"]["WILD_ITERATION"] == "1"
    assert "Use batch size 32" in seen["stdin"]
    assert f"✅ Human input {key} processed" in out


def test_alert_resolved_by_promise_goes_in_progress_then_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path)
    add_alert(paths, "alert-1", severity="info")
    script(monkeypatch, tmp_path, say("Restarted the job.", RESOLVED))
    result, out = run(paths)
    assert (result.reason, result.iterations) == ("complete", 1)
    lines = alert_lines(paths)
    assert [line["status"] for line in lines] == ["pending", "in-progress", "resolved"]
    assert lines[1]["context"] == {"attempt": 1}
    assert "resolvedAt" not in lines[1]
    assert lines[2]["resolvedAt"] == lines[2]["timestamp"]
    assert "✅ Alert resolved: alert-1" in out


def test_resolve_alert_tag_records_the_choice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path)
    add_alert(paths, "alert-1", severity="info", choices=["lower the learning rate", "ignore"])
    script(
        monkeypatch,
        tmp_path,
        say('<resolve_alert>{"id": "alert-1", "choice": "ignore"}</resolve_alert>'),
    )
    result, _ = run(paths)
    assert result.reason == "complete"
    last = alert_lines(paths)[-1]
    assert last["status"] == "resolved"
    assert last["resolution"] == {"choice": "ignore", "note": None}
    assert "- **Choices:** lower the learning rate; ignore" in prompt(paths, 1)


def test_task_complete_by_promise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Preprocess the data\n")
    script(monkeypatch, tmp_path, say("Preprocessed.", TASK))
    result, out = run(paths)
    assert (result.reason, result.iterations) == ("complete", 1)
    assert paths.tasks.read_text().endswith("- [x] [P1] task-001: Preprocess the data\n")
    assert out[-2:] == ["✅ Task complete: task-001", "✅ All work complete."]


def test_task_ticked_by_the_agent_itself_after_wild_marked_it_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Preprocess the data\n")
    # The edit only matches while the box reads [/], so it also proves wild set it first.
    tick = {
        "replace_in_file": ".wild/tasks.md",
        "old": "- [/] [P1] task-001",
        "new": "- [x] [P1] task-001",
    }
    script(monkeypatch, tmp_path, [tick, *say("Ticked it myself.")])
    result, _ = run(paths)
    assert (result.reason, result.iterations) == ("complete", 1)
    assert task_status(paths, "task-001") == "complete"
    assert state_of(paths).consecutive_failures == 0


BARRIER = """# Barriers

## [WAITING] data-ready
- Type: file-exists
- File: data/ready.flag
- Interval: 1h
"""


def test_monitoring_runs_when_all_work_waits_on_a_checkable_barrier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: data-ready\n")
    paths.barriers.write_text(BARRIER)
    satisfy = {"replace_in_file": ".wild/barriers.md", "old": "[WAITING]", "new": "[SATISFIED]"}
    script(monkeypatch, tmp_path, [satisfy, *say("The job finished.", MONITORED)], say(TASK))
    result, _ = run(paths)
    assert (result.reason, result.iterations) == ("complete", 2)
    assert worked_on(paths) == [("monitoring", "data-ready"), ("task", "task-001")]
    summaries = state_of(paths).recent_summaries
    assert summaries[0] == (
        "iteration 1: monitoring data-ready → done (exit 0, signals MONITORING_COMPLETE)"
    )
    assert "- data-ready (file-exists)" in prompt(paths, 1)


def test_monitoring_without_its_promise_is_a_failed_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: data-ready\n")
    paths.barriers.write_text(BARRIER)
    satisfy = {"replace_in_file": ".wild/barriers.md", "old": "[WAITING]", "new": "[SATISFIED]"}
    script(monkeypatch, tmp_path, [satisfy, *say("Looked around.")], say("Working on it."))
    result, _ = run(paths, max_iterations=2)
    assert result.reason == "max-iterations"
    state = state_of(paths)
    assert state.recent_summaries[0] == (
        "iteration 1: monitoring data-ready → failed (exit 0, signals none)"
    )
    # "Working on it." with no signal and no change to the task fails too: two in a row, but
    # only the task keeps a count of its own (monitoring is not retried at once).
    assert state.consecutive_failures == 2
    assert book(paths).failures == {"task-001": 1}


# -- asking and telling the human ------------------------------------------------------------


def test_need_human_input_on_a_task_holds_it_while_other_work_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(
        tmp_path, "- [ ] [P1] task-001: Pick the dataset\n- [ ] [P2] task-002: Write docs\n"
    )
    set_policy(paths, notify_command=notify_command(tmp_path))
    answer = "\n## [PENDING] 2026-02-08T12:00:00Z\n### Input:\nUse the 2025 snapshot.\n\n---\n"
    script(
        monkeypatch,
        tmp_path,
        say(
            "Two datasets fit.",
            "<promise>NEED_HUMAN_INPUT</promise>",
            "<reason>Which dataset: 2024 or 2025?</reason>",
            "<urgency>high</urgency>",
        ),
        # task-002 goes on meanwhile; at its end the human's answer arrives in human.md.
        [{"append_file": ".wild/human.md", "text": answer}, *say(TASK)],
        say(PROCESSED),
        say(TASK),
    )
    result, _ = run(paths)
    assert (result.reason, result.iterations) == ("complete", 4)
    assert worked_on(paths) == [
        ("task", "task-001"),
        ("task", "task-002"),
        ("human-input", "2026-02-08T12:00:00Z"),
        ("task", "task-001"),
    ]
    question = human(paths).inputs[0]
    assert (question.status, question.related_alert, question.type) == (
        "answered",
        "task-001",
        "question",
    )
    assert question.content == "Which dataset: 2024 or 2025?\n\nUrgency: high"
    assert f"- {question.key} (about task-001): Which dataset: 2024 or 2025?" in prompt(paths, 3)
    assert notes(tmp_path)[0].startswith("wild needs you (task-001): Which dataset: 2024 or 2025?")
    assert book(paths).awaiting == {}
    # Lineage: the question names the agent run it came from.
    first_run = event_kinds(paths, "agent-end")[0]["id"]
    assert [e["cause"] for e in event_kinds(paths, "escalation")] == [first_run]


def test_need_human_input_on_an_alert_escalates_it_and_the_answer_guides_the_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Write docs\n")
    add_alert(paths, "alert-1", severity="info")
    answer = "\n## [PENDING] 2026-02-08T12:00:00Z\n### Input:\nRoll back to step 200.\n\n---\n"
    script(
        monkeypatch,
        tmp_path,
        say("<promise>NEED_HUMAN_INPUT</promise>", "<reason>Roll back or restart?</reason>"),
        [{"append_file": ".wild/human.md", "text": answer}, *say(TASK)],
        say(PROCESSED),
        say(RESOLVED),
    )
    result, _ = run(paths)
    assert (result.reason, result.iterations) == ("complete", 4)
    assert worked_on(paths) == [
        ("alert", "alert-1"),
        ("task", "task-001"),
        ("human-input", "2026-02-08T12:00:00Z"),
        ("alert", "alert-1"),
    ]
    lines = alert_lines(paths)
    assert [line["status"] for line in lines] == [
        "pending",
        "in-progress",
        "escalated",
        "pending",
        "in-progress",
        "resolved",
    ]
    assert lines[3]["humanGuidance"] == "Roll back to step 200."
    assert lines[4]["context"] == {"attempt": 2}
    assert "### Guidance from the human:\nRoll back to step 200." in prompt(paths, 4)


def test_notify_human_does_not_wait_and_is_batched_by_the_context_switch_penalty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(
        tmp_path,
        "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n- [ ] [P1] task-003: C\n",
    )
    set_policy(paths, notify_command=notify_command(tmp_path), context_switch_penalty="15 minutes")
    script(
        monkeypatch,
        tmp_path,
        say("<promise>NOTIFY_HUMAN</promise>", "<reason>first</reason>", TASK),
        say("<promise>NOTIFY_HUMAN</promise>", "<reason>second</reason>", TASK),
        say("<promise>NOTIFY_HUMAN</promise>", "<reason>third</reason>", TASK),
    )
    clock = StepClock(timedelta(minutes=5))  # runs end at 10:05, 10:10, 10:15
    result, _ = run(paths, clock=clock, runner=clock.runner)
    assert (result.reason, result.iterations) == ("complete", 3)
    # first goes out at once; second and third wait out the 15 minutes, then go as one.
    assert notes(tmp_path) == [
        "wild (task-001): first",
        "2 notifications from wild:\n\nwild (task-002): second\n\nwild (task-003): third",
    ]
    assert [e["message"] for e in event_kinds(paths, "notification")] == [
        "first",
        "second",
        "third",
    ]


def test_batched_notes_still_queued_go_out_when_the_loop_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    set_policy(paths, notify_command=notify_command(tmp_path), context_switch_penalty="15 minutes")
    script(
        monkeypatch,
        tmp_path,
        say("<promise>NOTIFY_HUMAN</promise>", "<reason>first</reason>", TASK),
        say("<promise>NOTIFY_HUMAN</promise>", "<reason>second</reason>", TASK),
    )
    clock = StepClock(timedelta(minutes=1))
    result, _ = run(paths, clock=clock, runner=clock.runner)
    assert result.reason == "complete"
    assert notes(tmp_path) == ["wild (task-001): first", "wild (task-002): second"]


def test_premature_complete_is_recorded_and_the_loop_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n")
    script(
        monkeypatch,
        tmp_path,
        say("All done, I think.", "<promise>COMPLETE</promise>"),
        say(TASK),
        say(TASK, "<promise>COMPLETE</promise>"),
    )
    result, out = run(paths)
    assert (result.reason, result.iterations) == ("complete", 3)
    rejected = event_kinds(paths, "complete-rejected")
    assert [(e["remaining"], e["next"]) for e in rejected] == [(2, "task-001")]
    assert "⚠️  The agent said COMPLETE, but 2 work item(s) remain; going on" in out
    assert "- COMPLETE was ignored: 2 work item(s) remain, next task-001" in prompt(paths, 2)
    assert task_status(paths, "task-002") == "complete"


@pytest.mark.parametrize(
    ("status", "task", "failures", "awaiting"),
    [
        ("ok", "complete", {}, {}),
        ("retry", "in-progress", {}, {}),
        ("failed", "in-progress", {"task-001": 1}, {}),
        ("needs_human", "in-progress", {}, {"task-001": "the agent asked for your input"}),
    ],
)
def test_event_output_status_maps_to_the_outcome(  # noqa: PLR0917 (parametrized)
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    status: str,
    task: str,
    failures: dict[str, int],
    awaiting: dict[str, str],
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n")
    report = {"status": status, "summary": f"said {status}"}
    script(monkeypatch, tmp_path, say(f"<event_output>{json.dumps(report)}</event_output>"))
    result, _ = run(paths, max_iterations=1)
    assert result.iterations == 1
    assert task_status(paths, "task-001") == task
    assert (book(paths).failures, book(paths).awaiting) == (failures, awaiting)
    assert state_of(paths).consecutive_failures == (1 if status == "failed" else 0)
    assert state_of(paths).recent_summaries[0].endswith(f": said {status}")
    questions = [q for q in human(paths).inputs if q.status == "question"]
    assert len(questions) == (1 if status == "needs_human" else 0)


def test_event_output_new_events_become_tasks_and_alerts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n")
    report = {
        "status": "ok",
        "summary": "split the work",
        "new_events": [
            {"task": "Write the report", "priority": 1},
            "Plot the curves",
            {"alert": "disk almost full", "severity": "critical", "source": "df"},
            42,
        ],
        "artifacts": ["results/metrics.json"],
    }
    script(monkeypatch, tmp_path, say(f"<event_output>{json.dumps(report)}</event_output>"))
    result, _ = run(paths, max_iterations=1)
    assert result.iterations == 1
    assert paths.tasks.read_text().endswith(
        "- [x] [P1] task-001: A\n"
        "- [ ] [P1] task-002: Write the report\n"
        "- [ ] [P2] task-003: Plot the curves\n"
    )
    raised = alert_lines(paths)[-1]
    assert (raised["severity"], raised["source"], raised["description"], raised["status"]) == (
        "critical",
        "df",
        "disk almost full",
        "pending",
    )
    assert event_kinds(paths, "artifacts")[0]["artifacts"] == ["results/metrics.json"]
    assert event_kinds(paths, "new-event-ignored")[0]["event"] == 42


# -- policy escalation -----------------------------------------------------------------------


def test_critical_alert_at_low_autonomy_is_escalated_blocking_and_resumes_after_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Write docs\n")
    edits.update_policy(paths, "interactive", duration=None, now=T0)
    set_policy(paths, notify_command=notify_command(tmp_path), progress_reports="None")
    add_alert(paths, "alert-1", severity="critical")

    def human_answers(line: str) -> None:
        if line.startswith("⏸️  Escalated alert-1"):
            edits.add_human_input(paths, "Restart from the last checkpoint", urgent=False, now=T0)

    script(monkeypatch, tmp_path, say(PROCESSED), say(RESOLVED), say(TASK))
    result, out = run(paths, out=human_answers)
    assert (result.reason, result.iterations) == ("complete", 3)
    # Nothing else started while the question was open (interactive), then the work resumed.
    assert worked_on(paths) == [
        ("human-input", "2026-02-08T10:00:00Z"),
        ("alert", "alert-1"),
        ("task", "task-001"),
    ]
    assert [line["status"] for line in alert_lines(paths)] == [
        "pending",
        "escalated",
        "pending",
        "in-progress",
        "resolved",
    ]
    assert alert_lines(paths)[1]["escalatedAt"] == alert_lines(paths)[1]["timestamp"]
    question = human(paths).inputs[0]
    assert (question.status, question.related_alert) == ("answered", "alert-1")
    assert question.content.startswith("Critical alert - policy requires human notification")
    assert notes(tmp_path)[0].startswith(
        "wild needs you (alert-1): Critical alert - policy requires human notification\n"
        "[CRITICAL] train-job-1: alert-1: loss jumped to 9.8"
    )
    assert (
        "⏸️  Escalated alert-1 to the human: Critical alert - policy requires human "
        "notification" in out
    )
    assert "Restart from the last checkpoint" in prompt(paths, 2)


def test_repeated_task_failures_escalate_and_the_answer_gives_fresh_attempts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    set_policy(paths, notify_command=notify_command(tmp_path))

    def human_answers(line: str) -> None:
        if line.startswith("📣 wild needs you (task-001)"):
            edits.add_human_input(paths, "Use the smaller model", urgent=False, now=T0)

    crash: Actions = [{"stderr": "Traceback: CUDA out of memory"}, {"exit": 3}]
    script(monkeypatch, tmp_path, crash, crash, crash, say(PROCESSED), say(TASK))
    result, _ = run(paths, out=human_answers)
    assert (result.reason, result.iterations) == ("complete", 5)
    assert [w[0] for w in worked_on(paths)] == ["task"] * 3 + ["human-input", "task"]
    question = human(paths).inputs[0]
    assert question.content.startswith(
        "task-001 failed 3 times in a row (escalate after 3)\n\nLast log: "
    )
    assert question.status == "answered"
    assert notes(tmp_path)[0].startswith(
        "wild needs you (task-001): task-001 failed 3 times in a row (escalate after 3)"
    )
    assert (book(paths).failures, state_of(paths).consecutive_failures) == ({}, 0)


# -- failures leave the work as it was --------------------------------------------------------

GARBAGE = say(
    "lorem ipsum <promise>TASK_COMPLETE",  # never closed
    "I would print <promise>ALERT_RESOLVED</promise> here",  # a mention, not a signal
    "```",
    "<promise>HUMAN_INPUT_PROCESSED</promise>",  # inside a code block
    "```",
)
CRASH = [{"print": "starting"}, {"exit": 3}]


@pytest.mark.parametrize("agent", [CRASH, GARBAGE], ids=["exit-3", "garbage"])
@pytest.mark.parametrize("kind", ["task", "alert", "human-input"])
def test_a_failed_run_changes_nothing_and_the_work_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: Actions, kind: str
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n" if kind == "task" else "")
    if kind == "alert":
        add_alert(paths, "alert-1", severity="info")
    if kind == "human-input":
        edits.add_human_input(paths, "Use batch size 32", urgent=False, now=T0)
    done = {"task": TASK, "alert": RESOLVED, "human-input": PROCESSED}[kind]
    script(monkeypatch, tmp_path, agent, say(done))

    result, out = run(paths, max_iterations=1)
    assert (result.reason, result.iterations) == ("max-iterations", 1)
    crashed = [line for line in out if line.startswith("⚠️  Iteration 1:")]
    log = paths.logs / "iteration-1.log"
    expected = f"⚠️  Iteration 1: the agent exited with 3: starting (log: {log})"
    assert crashed == ([expected] if agent is CRASH else [])
    state = state_of(paths)
    assert state.consecutive_failures == 1
    assert state.current_work is not None and state.current_work.type == kind
    if kind == "task":
        assert task_status(paths, "task-001") == "in-progress"
    if kind == "alert":
        assert [line["status"] for line in alert_lines(paths)] == ["pending", "in-progress"]
    if kind == "human-input":
        assert [h.status for h in human(paths).inputs] == ["pending"]

    result, _ = run(paths)  # a new loop picks the same work up again and finishes it
    assert (result.reason, result.iterations) == ("complete", 1)
    assert state_of(paths).consecutive_failures == 0
    assert worked_on(paths)[0] == worked_on(paths)[1]
    if kind == "alert":
        assert alert_lines(paths)[-2]["context"] == {"attempt": 2}


def test_agent_that_hangs_is_killed_with_its_grandchildren_and_the_loop_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    hang: Actions = [
        {"spawn": None, "pid_file": "grandchild.pid"},
        {"record": "hung.json"},
        {"sleep": 3600},
    ]
    script(monkeypatch, tmp_path, hang, say(TASK))
    result, out = run(paths, agent_timeout_s=1.0)
    assert (result.reason, result.iterations) == ("complete", 2)
    log = paths.logs / "iteration-1.log"
    assert f"⚠️  Iteration 1: timed out after 1 s (log: {log})" in out
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    agent = json.loads((tmp_path / "hung.json").read_text())["pid"]
    assert not alive(grandchild)
    assert not alive(agent)
    assert state_of(paths).recent_summaries[0] == (
        "iteration 1: task task-001 → timed out (exit -15, signals none)"
    )
    assert "timed out after" in (paths.logs / "iteration-1.log").read_text()


def test_a_usage_limit_is_waited_out_not_counted_and_stop_ends_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")

    def stop_while_waiting(line: str) -> None:
        if line.startswith("⏳ The agent hit a usage limit"):
            control.request(paths, "stop")

    limited: Actions = [{"print": "Usage limit reached. Try again in 5 hours."}, {"exit": 1}]
    script(monkeypatch, tmp_path, limited)
    result, out = run(paths, out=stop_while_waiting)
    assert (result.reason, result.iterations) == ("stopped", 1)
    assert "⏳ The agent hit a usage limit; waiting 18000 s for it to reset" in out
    assert [e["wait_s"] for e in event_kinds(paths, "rate-limited")] == [18000.0]
    assert (state_of(paths).consecutive_failures, book(paths).failures) == (0, {})


# -- limits and waiting -----------------------------------------------------------------------


def test_once_runs_one_iteration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n")
    script(monkeypatch, tmp_path, say(TASK))
    result, _ = run(paths, once=True)
    assert result == LoopResult("once", 1, "one iteration done")
    assert (task_status(paths, "task-001"), task_status(paths, "task-002")) == ("complete", "todo")


def test_once_with_nothing_to_run_returns_at_once(tmp_path: Path) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n  - blockedBy: gate\n")
    paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")
    result, out = run(paths, once=True)
    assert result == LoopResult("once", 0, "nothing to run now")
    assert out == []


def test_max_iterations_counts_agent_runs_not_idle_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(
        tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P2] task-002: B\n  - blockedBy: gate\n"
    )
    paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")

    def open_gate(line: str) -> None:
        if line.startswith("⏳ Waiting"):
            edits.satisfy_barrier(paths, "gate", now=T0)

    script(
        monkeypatch,
        tmp_path,
        [{"record": "first.json"}, *say(TASK)],
        [{"record": "second.json"}, *say(TASK)],
    )
    result, out = run(paths, out=open_gate, max_iterations=2)
    assert result == LoopResult("max-iterations", 2, "reached 2 iterations")
    assert "⏳ Waiting (gate); sleeping until something changes" in out
    iterations = [
        json.loads((tmp_path / name).read_text())["env"]["WILD_ITERATION"]
        for name in ("first.json", "second.json")
    ]
    assert iterations == ["1", "2"]
    assert task_status(paths, "task-002") == "complete"


def test_max_time_ends_an_idle_loop(tmp_path: Path) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n  - blockedBy: gate\n")
    paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")
    result, _ = run(paths, max_time_s=0.2)
    assert result == LoopResult("max-time", 0, "reached the time limit")


def test_monitoring_repeats_while_the_loop_stays_blocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n  - blockedBy: data-ready\n")
    paths.barriers.write_text(BARRIER)
    script(monkeypatch, tmp_path, say("Still running.", MONITORED))
    result, out = run(paths, max_iterations=2, monitor_every_s=0.2)
    assert result == LoopResult("max-iterations", 2, "reached 2 iterations")
    assert worked_on(paths) == [("monitoring", "data-ready")] * 2
    assert "⏳ Waiting (data-ready); sleeping until something changes" in out


def test_idle_loop_does_not_wake_while_nothing_happens(tmp_path: Path) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: A\n  - blockedBy: gate\n")
    paths.barriers.write_text("# Barriers\n\n## [WAITING] gate\n- Type: manual\n")
    waiting = threading.Event()
    loop = Loop(paths, loop_options(), out=lambda line: waiting.set())
    results: list[LoopResult] = []
    thread = threading.Thread(target=lambda: results.append(loop.run()))
    thread.start()
    try:
        assert waiting.wait(30)
        time.sleep(2.0)  # a window for any spinning to show up in the counts
        assert loop.waker.wakeups == 0
    finally:
        control.request(paths, "stop", SystemClock())
        thread.join(30)
    assert results == [LoopResult("stopped", 0, "stopped on request")]
    # The stop request itself: its append surfaces as a modify and a close event, which the
    # loop may take in one wake-up or, on a busy machine, in two.
    assert 1 <= loop.waker.wakeups <= 2


def test_a_due_progress_report_goes_to_human_md_events_and_the_notify_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n")
    set_policy(paths, progress_reports="Every 1 minutes", notify_command=notify_command(tmp_path))
    # A loop started long ago and never reported: the first cycle owes a report.
    state = json.loads(paths.state.read_text())
    state["startedAt"] = "2020-01-01T00:00:00Z"
    paths.state.write_text(json.dumps(state))
    script(monkeypatch, tmp_path, say("<promise>TASK_COMPLETE</promise>"))
    result, _ = run(paths, once=True)
    assert result.reason == "once"
    reports = [h for h in human_md.parse(paths.human.read_text()).inputs if h.status == "report"]
    assert len(reports) == 1
    assert reports[0].content.startswith("Tasks: 0/1 complete\nAlerts: 0 open\n")
    assert len(event_kinds(paths, "progress-report")) == 1
    assert notes(tmp_path)[0].startswith("Progress report ")
    assert load_state(paths.state).state.last_progress_report is not None


def test_a_task_without_an_id_gets_one_before_it_is_worked_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [x] task-001: done\n- [ ] [P1] Build it\n")
    script(monkeypatch, tmp_path, say(TASK))
    result, _ = run(paths, max_iterations=1)
    assert result.iterations == 1
    assert worked_on(paths) == [("task", "task-002")]
    assert task_status(paths, "task-002") == "complete"
