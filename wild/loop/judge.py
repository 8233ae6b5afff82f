"""Judging a finished run, as a pure decision: no file is touched here.

`finish` reads the finished run and the files it changed and says what follows. What counts:

- done: the item is finished (input processed, alert resolved, task ticked, barriers checked),
  by its promise, by `<event_output>` status `ok`, or because the agent changed the file itself.
- failed: a failed attempt: the agent exited non-zero, timed out or reported an error, said
  `<event_output>` status `failed`, or said nothing wild understands and changed nothing.
  Status `retry` is not a failure (the agent asks for another go), nor is a rate-limited run.
- A cancelled run (`wild --stop`, SIGINT) changes nothing: the item resumes next time. The
  claims of a run that did not exit cleanly (killed, timed out, crashed, or reporting an error)
  are not believed (`wild.loop.claims`): it is a failed attempt, and only its file edits count.
- NEED_HUMAN_INPUT (also NEEDS_HUMAN, status `needs_human`) writes a QUESTION to human.md and
  holds the item until the human answers; NOTIFY_HUMAN tells the human and goes on.
- `<resolve_alert>` resolves the alerts it names; `<event_output>` `new_events` become tasks
  (`"text"` or `{"task": "text", "priority": 1}`) or alerts (`{"alert": "what happened",
  "severity": "warning"}`), and its `artifacts` are recorded in events.log.
- planning (no work left): done when the agent added tasks or confirmed the goal (COMPLETE);
  otherwise a failed attempt, counted under the work key `planning`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wild.agents.run_result import AgentRun
from wild.agents.signals import AlertResolution, PromiseWord, Signals
from wild.clock import iso
from wild.loop import claims, research_step
from wild.loop.bookkeeping import Bookkeeping
from wild.loop.model import (
    Action,
    AddTask,
    AppendAlert,
    Ask,
    EditFile,
    Log,
    LoopModel,
    Moment,
    Notify,
    Running,
    Say,
    VerifyTask,
)
from wild.loop.work import CHECKS, PLANNING
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import Alert, make_alert, status_update
from wild.parsers.severity import is_severity
from wild.parsers.tasks import Task
from wild.policy.escalation import should_escalate_failures
from wild.policy.model import HumanPolicy
from wild.record import record


@record
class Outcome:
    """How one piece of work went: the actions it needs and the bookkeeping after it."""

    book: Bookkeeping
    actions: tuple[Action, ...] = ()
    ran: bool = True  # False: no agent ran (an escalation came first)
    done: bool = False
    failed: bool = False
    verify: VerifyTask | None = None  # the task's own check must pass before it is done


@dataclass
class _Acts:
    """Actions gathered while judging one run."""

    items: list[Action] = field(default_factory=list)
    resolved: set[str] = field(default_factory=set)  # alerts resolved by these actions
    refused: set[str] = field(default_factory=set)  # alerts whose resolution lacked a choice

    def add(self, *actions: Action) -> None:
        self.items.extend(actions)


# -- judging a finished run ------------------------------------------------------------------


def finish(model: LoopModel, run: AgentRun, policy: HumanPolicy, at: Moment) -> Outcome:
    """What follows from the run on `model.running`; `model.ws` already holds its file edits."""
    running = model.running
    if running is None:
        raise ValueError("finish() needs the work the agent ran on")
    if run.cancelled:
        return Outcome(model.book)
    if running.work_type == "human-input":
        return _human_input(model, running, run, policy, at)
    if running.work_type == "alert":
        return _alert(model, running, run, policy, at)
    if running.work_type in ("task", "analysis"):  # an analysis is its sweep's task
        return _task(model, running, run, policy, at)
    if running.work_type == "planning":
        return _planning(model, running, run, policy, at)
    if running.work_type == CHECKS:
        return _checks(model, run, at)
    acts = _Acts()
    _common(model, run, running.work_id, at=at, acts=acts)  # a question; no item to hold
    if _finished(claims.believed(run), "MONITORING_COMPLETE"):
        return Outcome(model.book, tuple(acts.items), done=True)
    return Outcome(model.book, tuple(acts.items), failed=_attempt_failed(run, changed=False))


def _finished(signals: Signals, promise: PromiseWord) -> bool:
    out = signals.event_output
    return signals.has(promise) or (out is not None and out.status == "ok")


def _needs_human(signals: Signals) -> bool:
    out = signals.event_output
    return (
        signals.has("NEED_HUMAN_INPUT")
        or signals.has("NEEDS_HUMAN")
        or (out is not None and out.status == "needs_human")
    )


def _excused(run: AgentRun) -> bool:
    """Not the agent's failure: a usage limit, or the agent asking for another go (`retry`)."""
    out = claims.believed(run).event_output
    return run.rate_limited or (out is not None and out.status == "retry")


def _attempt_failed(run: AgentRun, *, changed: bool) -> bool:
    """A failed attempt; `changed`: the agent visibly moved the item (say, ticked a subtask)."""
    if _excused(run):
        return False
    signals = claims.believed(run)
    out = signals.event_output
    said_nothing = not signals.promises and out is None and not signals.resolutions
    return (
        run.failed or (out is not None and out.status == "failed") or (said_nothing and not changed)
    )


def _common(model: LoopModel, run: AgentRun, related: str, *, at: Moment, acts: _Acts) -> bool:
    """Act on NOTIFY_HUMAN, questions, `<resolve_alert>` and `<event_output>`; True when the
    agent asked the human (the caller decides how its item waits)."""
    signals = claims.believed(run)
    cause = model.agent_event
    ignored = claims.ignored(run, related, cause)
    if ignored is not None:
        acts.add(ignored)
    if signals.problems:
        problems = list(signals.problems)
        acts.add(Log("signal-problems", cause, {"related": related, "problems": problems}))
    if signals.has("NOTIFY_HUMAN"):
        acts.add(Notify(related, signals.reason or "(no reason given)", cause))
    for resolution in signals.resolutions:
        _resolve(model, resolution, at, acts)
    out = signals.event_output
    if out is not None:
        for event in out.new_events:
            _new_event(event, related, cause, at, acts)
        if out.artifacts:
            artifacts = list(out.artifacts)
            acts.add(Log("artifacts", cause, {"related": related, "artifacts": artifacts}))
    if not _needs_human(signals):
        return False
    summary = f"\n{out.summary}" if out is not None and out.summary else ""
    body = f"Urgency: {signals.urgency or 'medium'}{summary}"
    acts.add(Ask(related, _reason(signals), body, cause))
    return True


def _reason(signals: Signals) -> str:
    return signals.reason or "the agent asked for your input"


def _open_alert(model: LoopModel, alert_id: str) -> Alert | None:
    return next((a for a in model.ws.open_alerts if a.id == alert_id), None)


def _resolve(model: LoopModel, resolution: AlertResolution, at: Moment, acts: _Acts) -> None:
    alert = _open_alert(model, resolution.alert_id)
    if alert is None or resolution.alert_id in acts.resolved:
        acts.add(Log("resolve-ignored", model.agent_event, {"alert": resolution.alert_id}))
        return
    if alert.choices and resolution.choice not in alert.choices:
        _refuse_without_choice(model, alert, resolution.choice, acts)
        return
    choice = {"choice": resolution.choice, "note": resolution.note}
    acts.add(AppendAlert(status_update(alert, "resolved", at.now, resolution=choice)))
    acts.resolved.add(alert.id)


def _refuse_without_choice(model: LoopModel, alert: Alert, given: str | None, acts: _Acts) -> None:
    """An alert with choices is answered by one of them (a job may wait on it with `wild
    --wait-alert`); anything else leaves it open and says which choices there are."""
    what = "no choice" if given is None else f"{given!r}, not one of them"
    say = f"⚠️  Alert {alert.id} offers {', '.join(alert.choices)}; resolved with {what}, it"
    say += f' stays open (<resolve_alert>{{"alert_id": "{alert.id}", "choice": …}}</resolve_alert>)'
    acts.add(Say(say), Log("resolve-refused", model.agent_event, {"alert": alert.id}))
    acts.refused.add(alert.id)


def _new_event(event: Any, related: str, cause: str | None, at: Moment, acts: _Acts) -> None:
    """A task or alert the agent asked for in `new_events`; anything else is logged, not fatal."""
    if isinstance(event, str) and event.strip():
        event = {"task": event}
    if isinstance(event, Mapping) and isinstance(event.get("task"), str) and event["task"].strip():
        priority = tasks_md.new_task_priority(event.get("priority"))
        acts.add(AddTask(event["task"], priority, related, cause))
    elif isinstance(event, Mapping) and isinstance(event.get("alert"), str):
        severity = event.get("severity")
        context = event.get("context")
        record = make_alert(
            now=at.now,
            severity=severity if is_severity(severity) else "warning",
            source=str(event.get("source") or "agent"),
            type=str(event.get("type") or "agent-event"),
            description=event["alert"],
            context=context if isinstance(context, Mapping) else None,
        )
        acts.add(
            AppendAlert(record),
            Log("alert-raised", cause, {"related": related, "alert": record["id"]}),
        )
    else:
        acts.add(Log("new-event-ignored", cause, {"related": related, "event": event}))


def _failed_attempt(
    model: LoopModel, key: str, run: AgentRun, policy: HumanPolicy, acts: _Acts
) -> Outcome:
    """Count a failed attempt at a task or human input and escalate as the policy says."""
    book, escalated = failed_attempt(model, key, f"Last log: {run.log_path}", policy)
    acts.add(*escalated)
    return Outcome(book, tuple(acts.items), failed=True)


def failed_attempt(
    model: LoopModel, key: str, detail: str, policy: HumanPolicy
) -> tuple[Bookkeeping, tuple[Action, ...]]:
    """One more failed attempt at `key`; past the policy's Repeated Failures rule, the human is
    asked (the work waits for them) or told, as the policy says."""
    book, count = model.book.failed(key)
    escalation = should_escalate_failures(key, policy, count)
    if not (escalation.escalate and escalation.reason):
        return book, ()
    if escalation.blocking:
        ask = Ask(key, escalation.reason, detail, model.agent_event)
        return book.hold(key, escalation.reason), (ask,)
    return book, (Notify(key, escalation.reason, model.agent_event),)


# -- the three kinds of work ----------------------------------------------------------------


def _human_input(
    model: LoopModel, running: Running, run: AgentRun, policy: HumanPolicy, at: Moment
) -> Outcome:
    entry = running.entry
    if entry is None:  # start() sets it for every human input
        raise ValueError("a human-input run without its entry")
    acts = _Acts()
    signals = claims.believed(run)
    asked = _common(model, run, entry.key, at=at, acts=acts)
    if _finished(signals, "HUMAN_INPUT_PROCESSED"):
        _processed(model, running, run, at=at, acts=acts)
        book = model.book.answered().succeeded(entry.key)
        for question in running.questions:  # each asking work gets the answer in its prompt
            if question.related_alert is not None:
                book = book.with_answer(question.related_alert, question.content, entry.content)
        return Outcome(book, tuple(acts.items), done=True)
    if asked:
        return Outcome(model.book.hold(entry.key, _reason(signals)), tuple(acts.items))
    if _excused(run):
        return Outcome(model.book, tuple(acts.items))
    return _failed_attempt(model, entry.key, run, policy, acts)  # not processed: try again


def _processed(
    model: LoopModel, running: Running, run: AgentRun, *, at: Moment, acts: _Acts
) -> None:
    """Mark the input processed; the human has answered, so whatever waited on them goes on."""
    entry, questions = running.entry, running.questions
    if entry is None:
        return
    stamp = iso(at.now)
    note = f"processed by the agent ({run.log_path.name})"

    def edit(text: str) -> str:
        text = human_md.mark_processed(text, entry.key, processed_at=stamp, note=note)
        for question in questions:
            text = human_md.mark_answered(text, question.key)
        return text

    acts.add(EditFile("human", edit))
    waiting = {a.id for a in model.ws.open_alerts if a.status == "escalated"}
    if entry.related_alert is not None:
        waiting.add(entry.related_alert)
    for alert_id in sorted(waiting - acts.resolved):
        alert = _open_alert(model, alert_id)
        if alert is not None:
            # Back in the queue, with the human's words in the agent's next alert prompt.
            update = status_update(alert, "pending", at.now, humanGuidance=entry.content)
            acts.add(AppendAlert(update))
    acts.add(Say(f"✅ Human input {entry.key} processed"))


def _alert(
    model: LoopModel, running: Running, run: AgentRun, policy: HumanPolicy, at: Moment
) -> Outcome:
    acts = _Acts()
    signals = claims.believed(run)
    asked = _common(model, run, running.work_id, at=at, acts=acts)
    latest = _open_alert(model, running.work_id)  # None: resolved by the agent's own append
    said_resolved = _finished(signals, "ALERT_RESOLVED")
    if latest is not None and latest.choices and running.work_id not in acts.resolved:
        if said_resolved and latest.id not in acts.refused:
            _refuse_without_choice(model, latest, None, acts)
        if latest.id in acts.refused:
            return _failed_attempt(model, running.work_id, run, policy, acts)
    if latest is None or running.work_id in acts.resolved or said_resolved:
        if latest is not None and running.work_id not in acts.resolved:
            acts.add(AppendAlert(status_update(latest, "resolved", at.now)))
        acts.add(Say(f"✅ Alert resolved: {running.work_id}"))
        return Outcome(model.book.alert_closed(running.work_id), tuple(acts.items), done=True)
    if asked:
        acts.add(AppendAlert(status_update(latest, "escalated", at.now)))
        return Outcome(model.book, tuple(acts.items))
    return Outcome(model.book, tuple(acts.items), failed=_attempt_failed(run, changed=False))


def _task(
    model: LoopModel, running: Running, run: AgentRun, policy: HumanPolicy, at: Moment
) -> Outcome:
    task_id = running.work_id
    acts = _Acts()
    signals = claims.believed(run)
    asked = _common(model, run, task_id, at=at, acts=acts)
    after = tasks_md.find(model.ws.tasks, task_id)
    ticked = after is not None and after.status == "complete"
    # The check as it was before the run: an agent deleting the line does not skip it.
    before = running.task
    check = (before.check if before is not None else None) or (after and after.check)
    said_done = _finished(signals, "TASK_COMPLETE") or (
        # An analysis ends by saying what follows: more experiments or the goal met.
        running.work_type == "analysis" and (signals.has("CONTINUE") or signals.has("COMPLETE"))
    )
    if check and (ticked or said_done):
        verify = VerifyTask(task_id, check, ticked_by_agent=ticked)
        return Outcome(model.book, tuple(acts.items), verify=verify)
    if ticked or said_done:
        if not ticked:
            acts.add(EditFile("tasks", lambda text: tasks_md.set_status(text, task_id, "complete")))
        acts.add(Say(f"✅ Task complete: {task_id}"))
        return Outcome(model.book.succeeded(task_id), tuple(acts.items), done=True)
    if after is None or after.status == "cancelled":
        acts.add(Say(f"✅ Task {task_id} was cancelled or removed by the agent"))
        return Outcome(model.book.succeeded(task_id), tuple(acts.items), done=True)
    if asked:
        return Outcome(model.book.hold(task_id, _reason(signals)), tuple(acts.items))
    if _attempt_failed(run, changed=before is not None and _moved(before, after)):
        return _failed_attempt(model, task_id, run, policy, acts)
    return Outcome(model.book.succeeded(task_id), tuple(acts.items))


def _planning(
    model: LoopModel, running: Running, run: AgentRun, policy: HumanPolicy, at: Moment
) -> Outcome:
    """Planned (tasks added) or confirmed (COMPLETE) is done; neither is a failed attempt."""
    acts = _Acts()
    signals = claims.believed(run)
    asked = _common(model, run, PLANNING, at=at, acts=acts)
    planned = len(model.ws.tasks.tasks) > running.tasks_before or research_step.launches_sweep(run)
    if planned or signals.has("COMPLETE") or _finished(signals, "COMPLETE"):
        return Outcome(model.book.succeeded(PLANNING), tuple(acts.items), done=True)
    if asked:
        return Outcome(model.book.hold(PLANNING, _reason(signals)), tuple(acts.items))
    if _excused(run):
        return Outcome(model.book, tuple(acts.items))
    return _failed_attempt(model, PLANNING, run, policy, acts)


def _checks(model: LoopModel, run: AgentRun, at: Moment) -> Outcome:
    """A run on failing checks is judged by running them again (wild/loop/ending.py): done
    here, unless the agent asked the human, which holds that work."""
    acts = _Acts()
    if _common(model, run, CHECKS, at=at, acts=acts):
        return Outcome(model.book.hold(CHECKS, _reason(claims.believed(run))), tuple(acts.items))
    return Outcome(model.book, tuple(acts.items), done=True)


def _moved(before: Task, after: Task) -> bool:
    """The agent visibly worked on the task: its text or a subtask changed."""

    def shape(task: Task) -> tuple[object, ...]:
        return (task.text, tuple((sub.text, sub.status) for sub in task.subtasks))

    return shape(before) != shape(after)
