"""`decide` alone: a model and an event in, a model and actions out. Pure, so no file, process
or clock is involved: the workspace is parsed from strings and the time is a value."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from wild.agents.run_result import AgentRun
from wild.agents.signals import parse_signals
from wild.loop import decide as decide_module
from wild.loop.decide import decide as decide_step
from wild.loop.model import (
    AddTask,
    AgentFinished,
    AppendAlert,
    CompactAlerts,
    Continue,
    ControlRequested,
    EditFile,
    End,
    Event,
    Log,
    LoopModel,
    LoopOptions,
    Moment,
    Report,
    RunAgent,
    Say,
    SendNotes,
    Step,
    SuperviseRuns,
    Tick,
    Wait,
)
from wild.parsers import barriers as barriers_md
from wild.parsers import human as human_md
from wild.parsers import policy as policy_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import (
    Alert,
    AlertIndex,
    encode_alert,
    make_alert,
    parse_entry,
    status_update,
)
from wild.parsers.control import ControlRequest
from wild.parsers.state import LoopState
from wild.paths import WildPaths
from wild.policy.notify import NoteBatch
from wild.workspace import assemble_workspace

T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)
AT = Moment(T0, 100.0)
POLICY = (
    "# Human Policy\n\n## Current Policy: Autonomous Mode\n\n### Settings\n\n"
    "- **Mode:** autonomous\n- **Progress Reports:** None\n"
)


def model(
    tasks: str = "",
    *,
    barriers: str = "",
    human: str = "",
    policy: str = POLICY,
    alerts: tuple[dict[str, object], ...] = (),
    state: LoopState | None = None,
    **options: object,
) -> LoopModel:
    paths = WildPaths(Path("/project/.wild"))
    entries = [parse_entry(encode_alert(record), n)[0] for n, record in enumerate(alerts, 1)]
    assert all(isinstance(entry, Alert) for entry in entries)
    ws = assemble_workspace(
        paths,
        T0,
        tasks=tasks_md.parse("# Tasks\n\n" + tasks),
        barriers=barriers_md.parse(barriers),
        human=human_md.parse(human),
        policy_doc=policy_md.parse(policy),
        alerts=AlertIndex([e for e in entries if isinstance(e, Alert)]).all(),
    )
    settings: dict[str, object] = {
        "goal": "Ship it",
        "agent": "custom",
        "agent_cmd": "x",
        "plan": False,
    }
    settings.update(options)
    return LoopModel(
        options=LoopOptions(**settings),  # type: ignore[arg-type]
        ws=ws,
        state=state or LoopState(started_at="2026-02-08T10:00:00Z"),
        started_mono=AT.mono,
    )


def decide(model: LoopModel, event: Event, at: Moment) -> Step:
    """`decide`, without the state machine's own lines (tests/loop/test_states.py has them)."""
    step = decide_step(model, event, at)
    kept = (a for a in step.actions if not (isinstance(a, Log) and a.kind.startswith("state")))
    return Step(step.model, tuple(kept))


def run(text: str, *, exit_code: int = 0, **fields: object) -> AgentRun:
    run = AgentRun(
        exit_code=exit_code,
        timed_out=False,
        cancelled=False,
        duration_s=1.0,
        final_text=text,
        signals=parse_signals(text),
        cost_usd=None,
        input_tokens=None,
        output_tokens=None,
        rate_limited=False,
        rate_limit_reset=None,
        log_path=Path("/project/.wild/logs/iteration-1.log"),
        output_bytes=len(text),
    )
    return replace(run, **fields)  # type: ignore[arg-type]


def kinds(actions: tuple[object, ...]) -> list[str]:
    return [type(action).__name__ for action in actions]


# -- what a tick decides ---------------------------------------------------------------------


def test_a_ready_task_is_marked_in_progress_and_run_as_the_next_iteration() -> None:
    step = decide(model("- [ ] [P1] task-001: Train\n"), Tick(), AT)
    assert kinds(step.actions) == ["EditFile", "RunAgent"]
    run_agent = step.actions[-1]
    assert isinstance(run_agent, RunAgent)
    assert (run_agent.iteration, run_agent.work_type, run_agent.work_id) == (1, "task", "task-001")
    edit = step.actions[0]
    assert isinstance(edit, EditFile) and edit.file == "tasks"
    assert edit.edit("- [ ] [P1] task-001: Train\n") == "- [/] [P1] task-001: Train\n"
    assert step.model.running is not None and step.model.running.work_id == "task-001"
    current = step.model.state.current_work
    assert current is not None and (current.type, current.id) == ("task", "task-001")


def test_tasks_without_ids_get_them_before_anything_runs() -> None:
    step = decide(model("- [ ] [P1] Train\n"), Tick(), AT)
    assert kinds(step.actions) == ["EditFile", "Continue"]
    edit = step.actions[0]
    assert isinstance(edit, EditFile)
    assert "task-001: Train" in edit.edit("- [ ] [P1] Train\n")


def test_no_work_left_ends_the_loop_and_flushes_batched_notes() -> None:
    queued = NoteBatch(("wild (a): one",), last_sent=T0)  # inside its window: not due yet
    step = decide(replace(model("- [x] [P1] task-001: Train\n"), notes=queued), Tick(), AT)
    assert kinds(step.actions) == ["Say", "Log", "SendNotes", "End"]
    send, end = step.actions[-2], step.actions[-1]
    assert send == SendNotes(("wild (a): one",))  # the loop ends: sent, window or not
    assert isinstance(end, End) and end.result.reason == "complete"
    assert step.model.notes.queued == ()


def test_a_stop_a_signal_and_each_limit_end_the_loop_before_any_work() -> None:
    ready = "- [ ] [P1] task-001: Train\n"
    cases = [
        (model(ready), Tick(stop=True), AT, "stopped"),
        (replace(model(ready, max_iterations=2), counted=2), Tick(), AT, "max-iterations"),
        (model(ready, max_time_s=60.0), Tick(), Moment(T0, AT.mono + 60.0), "max-time"),
    ]
    for start, event, at, reason in cases:
        step = decide(start, event, at)
        end = step.actions[-1]
        assert isinstance(end, End) and end.result.reason == reason
        assert not any(isinstance(a, RunAgent) for a in step.actions)


def test_pause_and_resume_requests_change_the_state_and_log_each_request() -> None:
    start = model("- [ ] [P1] task-001: Train\n")
    paused = decide(start, ControlRequested((ControlRequest("pause", None),)), AT)
    assert paused.model.state.paused
    assert paused.actions == (Log("control", None, {"command": "pause"}), Continue())
    idle = decide(paused.model, Tick(), AT)
    assert kinds(idle.actions) == ["Say", "Wait"]
    assert idle.actions[0] == Say("⏸️  paused; `wild --resume` continues")
    resumed = decide(paused.model, ControlRequested((ControlRequest("resume", None),)), AT)
    assert not resumed.model.state.paused
    assert isinstance(decide(resumed.model, Tick(), AT).actions[-1], RunAgent)


def test_a_recheck_request_looks_at_the_runs_at_once() -> None:
    """`wild --approve <sweep id>` asks it: the held runs start now, not at the next poll."""
    start = replace(model(), runs_polled_at=AT.mono)  # just polled: the next is 30 s away
    assert not isinstance(decide(start, Tick(), AT).actions[0], SuperviseRuns)
    rechecked = decide(start, ControlRequested((ControlRequest("recheck", None),)), AT)
    assert decide(rechecked.model, Tick(), AT).actions == (SuperviseRuns(),)


def test_a_stop_request_ends_the_loop_at_the_next_tick() -> None:
    stopped = decide(model(), ControlRequested((ControlRequest("stop", None),)), AT)
    end = decide(stopped.model, Tick(), AT).actions[-1]
    assert isinstance(end, End) and end.result.reason == "stopped"


def test_waiting_on_a_manual_barrier_sleeps_until_the_next_timed_duty() -> None:
    barriers = "# Barriers\n\n## [WAITING] gate\n- Type: manual\n"
    tasks = "- [ ] [P1] task-001: Train\n  - blockedBy: gate\n"
    policy = POLICY.replace("None", "Every 30 minutes")
    state = LoopState(started_at="2026-02-08T09:50:00Z")
    step = decide(model(tasks, barriers=barriers, policy=policy, state=state), Tick(), AT)
    assert step.actions[-2] == Say("⏳ Waiting (gate); sleeping until something changes")
    assert step.actions[-1] == Wait(20 * 60.0)  # the next progress report is due at 10:20
    forever = decide(model(tasks, barriers=barriers), Tick(), AT).actions[-1]
    assert forever == Wait(None)  # nothing timed: only an event can wake it


def test_a_due_progress_report_is_made_and_remembered() -> None:
    policy = POLICY.replace("None", "Every 30 minutes")
    state = LoopState(started_at="2026-02-08T09:00:00Z")
    step = decide(model("- [ ] [P1] task-001: Train\n", policy=policy, state=state), Tick(), AT)
    report = step.actions[0]
    assert isinstance(report, Report) and report.summary.startswith("Tasks: 0/1 complete\n")
    assert step.model.state.last_progress_report == "2026-02-08T10:00:00Z"
    again = decide(step.model, Tick(), AT)
    assert not any(isinstance(a, Report) for a in again.actions)


def test_monitoring_runs_once_when_all_work_waits_on_a_checkable_barrier_then_again_later() -> None:
    barriers = "# Barriers\n\n## [WAITING] data\n- Type: file-exists\n- File: ready.flag\n"
    start = model("- [ ] [P1] task-001: Train\n  - blockedBy: data\n", barriers=barriers)
    first = decide(start, Tick(), AT)
    assert isinstance(first.actions[-1], RunAgent) and first.actions[-1].work_type == "monitoring"
    looked = replace(first.model, running=None)
    assert decide(looked, Tick(), AT).actions[-1] == Wait(1800.0)
    later = decide(looked, Tick(), Moment(T0 + timedelta(minutes=30), AT.mono + 1800.0))
    assert isinstance(later.actions[-1], RunAgent)


def test_a_critical_alert_at_low_autonomy_escalates_without_a_run() -> None:
    policy = POLICY.replace("- **Mode:** autonomous", "- **Mode:** interactive")
    alert = make_alert(
        now=T0, severity="critical", source="job", type="oom", description="OOM", alert_id="a1"
    )
    step = decide(model(policy=policy, alerts=(alert,)), Tick(), AT)
    assert kinds(step.actions) == ["AppendAlert", "Ask", "SendNotes", "Say", "Continue"]
    escalated = step.actions[0]
    assert isinstance(escalated, AppendAlert) and escalated.record["status"] == "escalated"
    assert step.model.book.notified  # told once: the next tick does not ask again


# -- what a finished run decides ---------------------------------------------------------------


def started(tasks: str, **options: Any) -> LoopModel:
    step = decide(model(tasks, **options), Tick(), AT)
    assert isinstance(step.actions[-1], RunAgent)
    return step.model


def test_task_complete_ticks_the_box_counts_the_iteration_and_keeps_a_summary() -> None:
    running = started("- [ ] [P1] task-001: Train\n")
    step = decide(running, AgentFinished(run("<promise>TASK_COMPLETE</promise>"), "ev-1"), AT)
    assert kinds(step.actions) == ["EditFile", "Say", "Continue"]
    edit = step.actions[0]
    assert isinstance(edit, EditFile)
    assert edit.edit("- [/] [P1] task-001: Train\n") == "- [x] [P1] task-001: Train\n"
    after = step.model
    assert (after.iterations, after.state.iteration, after.running) == (1, 1, None)
    assert after.agent_event == "ev-1"
    assert after.state.recent_summaries == (
        "iteration 1: task task-001 → done (exit 0, signals TASK_COMPLETE)",
    )


def test_a_crash_counts_a_failure_and_keeps_the_work_current() -> None:
    running = started("- [ ] [P1] task-001: Train\n")
    step = decide(running, AgentFinished(run("boom\n", exit_code=3), "ev-1"), AT)
    assert step.model.state.consecutive_failures == 1
    assert step.model.book.failures == {"task-001": 1}
    assert step.model.state.current_work is not None
    assert any(isinstance(a, Say) and a.text.startswith("⚠️  Iteration 1:") for a in step.actions)


def test_a_premature_complete_is_judged_at_the_next_tick() -> None:
    running = started("- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    said = run("<promise>TASK_COMPLETE</promise>\n<promise>COMPLETE</promise>")
    finished = decide(running, AgentFinished(said, "ev-1"), AT)
    assert finished.model.complete_claimed
    # The driver reads the files again: task-001 ticked, task-002 left.
    ws = assemble_workspace(
        finished.model.ws.paths,
        T0,
        tasks=tasks_md.parse("# Tasks\n\n- [x] [P1] task-001: A\n- [ ] [P1] task-002: B\n"),
        barriers=finished.model.ws.barriers,
        human=finished.model.ws.human,
        policy_doc=finished.model.ws.policy_doc,
        alerts=(),
    )
    tick = decide(replace(finished.model, ws=ws), Tick(), AT)
    assert Log("complete-rejected", "ev-1", {"remaining": 1, "next": "task-002"}) in tick.actions
    assert tick.model.state.recent_summaries[-1] == (
        "COMPLETE was ignored: 1 work item left, next task-002"
    )
    assert not tick.model.complete_claimed


def test_a_usage_limit_waits_for_the_reset_and_is_no_failure() -> None:
    running = started("- [ ] [P1] task-001: Train\n")
    reset = T0 + timedelta(minutes=10)
    limited = run("limit", exit_code=1, rate_limited=True, rate_limit_reset=reset)
    step = decide(running, AgentFinished(limited, "ev-1"), AT)
    assert step.model.state.consecutive_failures == 0
    assert (step.model.iterations, step.model.counted) == (1, 0)  # not against --max-iterations
    assert step.model.rate_limited_until == AT.mono + 600.0
    assert Log("rate-limited", "ev-1", {"wait_s": 600.0}) in step.actions
    waiting = decide(step.model, Tick(), Moment(T0, AT.mono + 100.0))
    assert waiting.actions[-1] == Wait(500.0)
    over = decide(step.model, Tick(), Moment(reset, AT.mono + 600.0))
    assert isinstance(over.actions[-1], RunAgent)


def test_once_ends_after_one_run() -> None:
    running = started("- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n", once=True)
    step = decide(running, AgentFinished(run("<promise>TASK_COMPLETE</promise>"), "ev-1"), AT)
    end = step.actions[-1]
    assert isinstance(end, End) and end.result.reason == "once"


def test_decide_is_pure_the_same_input_gives_the_same_output() -> None:
    start = model("- [ ] [P1] task-001: Train\n- [ ] [P2] task-002: Docs\n")
    first, second = decide(start, Tick(), AT), decide(start, Tick(), AT)
    assert first.model == second.model
    assert kinds(first.actions) == kinds(second.actions)
    assert start.state.current_work is None  # the input model is not changed


def test_compaction_is_asked_for_once_per_count_of_resolved_alerts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(decide_module, "COMPACT_AFTER_RESOLVED", 2)
    resolved = tuple(
        status_update(
            make_alert(now=T0, severity="info", source="j", type="t", description="d", alert_id=i),
            "resolved",
            T0,
        )
        for i in ("a1", "a2")
    )
    first = decide(model(alerts=resolved), Tick(), AT)
    assert any(isinstance(a, CompactAlerts) for a in first.actions)
    # Nothing moved (say, the file could not be rewritten): the same count does not ask again.
    again = decide(first.model, Tick(), AT)
    assert not any(isinstance(a, CompactAlerts) for a in again.actions)
    below = decide(model(alerts=resolved[:1]), Tick(), AT)
    assert not any(isinstance(a, CompactAlerts) for a in below.actions)


def test_the_reason_for_waiting_is_said_once_not_at_every_wake_up() -> None:
    barriers = "# Barriers\n\n## [WAITING] gate\n- Type: manual\n"
    first = decide(model("- [ ] [P1] t-1: A\n  - blockedBy: gate\n", barriers=barriers), Tick(), AT)
    assert Say("⏳ Waiting (gate); sleeping until something changes") in first.actions
    again = decide(first.model, Tick(), AT)
    assert kinds(again.actions) == ["Wait"]


def test_tasks_an_agent_asks_for_get_the_one_priority_rule_of_added_tasks() -> None:
    running = started("- [ ] [P1] task-001: Train\n")
    asked = [{"task": "Urgent", "priority": 0}, {"task": "Later", "priority": 5}, "Plain"]
    report = json.dumps({"status": "ok", "summary": "split", "new_events": asked})
    step = decide(running, AgentFinished(run(f"<event_output>{report}</event_output>"), "e"), AT)
    added = [(a.text, a.priority) for a in step.actions if isinstance(a, AddTask)]
    assert added == [("Urgent", 1), ("Later", 5), ("Plain", 2)]


def test_a_step_that_sends_no_note_hands_back_the_model_it_was_given() -> None:
    """The notes pass of a decision makes a new model only when the batch or the notes sent
    change: a step that sends nothing gives the model back as it was, not a copy (a copy is a
    `dataclasses.replace`, ~49 of them an instant iteration; before, one per decision here)."""
    from wild.loop import notes
    from wild.loop.model import Notify

    idle = model("- [ ] [P1] task-001: A\n")
    batched_model, actions = notes.batched(idle, (Wait(5.0),), AT, 0)
    assert batched_model is idle  # before: a copy with the same notes
    assert actions == (Wait(5.0),)
    sent, _ = notes.batched(idle, (Notify("task-001", "look", None),), AT, 0)
    assert sent is not idle and sent.notified == frozenset({"look"})
