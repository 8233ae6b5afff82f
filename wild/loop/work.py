"""Handling one piece of work: run the agent on it, read what it said, update the files.

Each handler returns an `Outcome`; the loop does the iteration accounting. What counts:

- done: the item is finished (input processed, alert resolved, task ticked, barriers checked),
  by its promise, by `<event_output>` status `ok`, or because the agent changed the file itself.
- failed: a failed attempt: the agent exited non-zero, timed out or reported an error, said
  `<event_output>` status `failed`, or said nothing wild understands and changed nothing.
  Status `retry` is not a failure (the agent asks for another go), nor is a rate-limited run.
- A cancelled run (`wild --stop`, SIGINT) changes nothing: the item resumes next time. A run that
  timed out was killed mid-way, so its promises are not believed; only its file edits count.
- NEED_HUMAN_INPUT (also NEEDS_HUMAN, status `needs_human`) writes a QUESTION to human.md and
  holds the item until the human answers; NOTIFY_HUMAN tells the human and goes on.
- `<resolve_alert>` resolves the alerts it names; `<event_output>` `new_events` become tasks
  (`"text"` or `{"task": "text", "priority": 1}`) or alerts (`{"alert": "what happened",
  "severity": "warning"}`), and its `artifacts` are recorded in events.log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from wild import prompts
from wild.agents.runner import AgentRun
from wild.agents.signals import AlertResolution, PromiseWord, Signals
from wild.bookkeeping import Bookkeeping
from wild.clock import Clock, iso
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import SEVERITIES, Alert, append_alert, make_alert, status_update
from wild.parsers.events_log import EventLog
from wild.parsers.tasks import Task
from wild.paths import WildPaths
from wild.policy.escalation import should_escalate, should_escalate_failures
from wild.reporting import Reporter
from wild.selection import Selection, WorkItem, task_key
from wild.store import read_text
from wild.workspace import Workspace

RunAgent = Callable[[Workspace, str, str, Mapping[str, object]], AgentRun]
Edit = Callable[[Path, Callable[[str], str]], str]


@dataclass(frozen=True)
class Services:
    """What handlers use of the loop: the files, the clock, the human and the agent."""

    paths: WildPaths
    clock: Clock
    out: Callable[[str], None]
    events: EventLog
    reporter: Reporter
    edit: Edit  # a compare-and-swap edit the loop's watcher knows to be its own
    latest_alert: Callable[[str], Alert | None]  # current state, after the agent's appends
    run_agent: RunAgent  # (workspace, work type, work id, prompt values) -> the finished run
    cause: Callable[[], str | None]  # the last agent run's events.log id: what follows from it


@dataclass(frozen=True)
class Outcome:
    """How handling one piece of work went (see the module docstring)."""

    book: Bookkeeping
    run: AgentRun | None = None  # None: no agent ran (an escalation came first)
    done: bool = False
    failed: bool = False


def handle(
    s: Services,
    ws: Workspace,
    item: WorkItem,
    book: Bookkeeping,
    *,
    feedback: str,
    minutes_since_progress: float,
) -> Outcome:
    """Work on the selected human input, alert or task."""
    if item.kind == "human-input":
        return _human_input(s, ws, item, book)
    if item.kind == "alert":
        return _alert(s, ws, item, book, minutes_since_progress)
    return _task(s, ws, item, book, feedback)


def monitor(s: Services, ws: Workspace, selection: Selection, book: Bookkeeping) -> Outcome:
    """One agent look at the jobs behind the barriers all remaining work waits on."""
    ids = ",".join(b.id for b in selection.waiting_barriers)
    values = prompts.monitoring_values(selection.waiting_barriers)
    run = s.run_agent(ws, "monitoring", ids, values)
    if run.cancelled:
        return Outcome(book, run)
    _common(s, ws, run, ids)  # a question is written; there is no item to hold
    if _finished(_believed(run), "MONITORING_COMPLETE"):
        return Outcome(book, run, done=True)
    return Outcome(book, run, failed=_attempt_failed(run, changed=False))


# -- signals every kind of work may give ----------------------------------------------------


def _believed(run: AgentRun) -> Signals:
    """The signals wild acts on: none from a run killed at its timeout."""
    return Signals() if run.timed_out else run.signals


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
    out = _believed(run).event_output
    return run.rate_limited or (out is not None and out.status == "retry")


def _attempt_failed(run: AgentRun, *, changed: bool) -> bool:
    """A failed attempt; `changed`: the agent visibly moved the item (say, ticked a subtask)."""
    if _excused(run):
        return False
    signals = _believed(run)
    out = signals.event_output
    said_nothing = not signals.promises and out is None and not signals.resolutions
    return (
        run.failed or (out is not None and out.status == "failed") or (said_nothing and not changed)
    )


def _common(s: Services, ws: Workspace, run: AgentRun, related: str) -> bool:
    """Act on NOTIFY_HUMAN, questions, `<resolve_alert>` and `<event_output>`; True when the
    agent asked the human (the caller decides how its item waits)."""
    signals = _believed(run)
    now, cause = s.clock.now(), s.cause()
    if signals.problems:
        problems = list(signals.problems)
        s.events.append("signal-problems", cause=cause, related=related, problems=problems)
    if signals.has("NOTIFY_HUMAN"):
        message = signals.reason or "(no reason given)"
        s.reporter.notify(ws.policy, now=now, related=related, message=message, cause=cause)
    for resolution in signals.resolutions:
        _resolve(s, resolution)
    out = signals.event_output
    if out is not None:
        for event in out.new_events:
            _new_event(s, event, related)
        if out.artifacts:
            artifacts = list(out.artifacts)
            s.events.append("artifacts", cause=cause, related=related, artifacts=artifacts)
    if not _needs_human(signals):
        return False
    summary = f"\n{out.summary}" if out is not None and out.summary else ""
    s.reporter.ask(
        ws.policy,
        now=now,
        related=related,
        title=_reason(signals),
        body=f"Urgency: {signals.urgency or 'medium'}{summary}",
        cause=cause,
    )
    return True


def _reason(signals: Signals) -> str:
    return signals.reason or "the agent asked for your input"


def _resolve(s: Services, resolution: AlertResolution) -> None:
    alert = s.latest_alert(resolution.alert_id)
    if alert is None or alert.status == "resolved":
        s.events.append("resolve-ignored", cause=s.cause(), alert=resolution.alert_id)
        return
    choice = {"choice": resolution.choice, "note": resolution.note}
    append_alert(s.paths.alerts, status_update(alert, "resolved", s.clock.now(), resolution=choice))


def _new_event(s: Services, event: Any, related: str) -> None:
    """A task or alert the agent asked for in `new_events`; anything else is logged, not fatal."""
    if isinstance(event, str) and event.strip():
        event = {"task": event}
    if isinstance(event, Mapping) and isinstance(event.get("task"), str) and event["task"].strip():
        priority = event.get("priority")
        new_id = _add_task(s, event["task"], priority if _is_count(priority) else 2)
        s.events.append("task-added", cause=s.cause(), related=related, task=new_id)
    elif isinstance(event, Mapping) and isinstance(event.get("alert"), str):
        severity = event.get("severity")
        context = event.get("context")
        record = make_alert(
            now=s.clock.now(),
            severity=severity if severity in SEVERITIES else "warning",
            source=str(event.get("source") or "agent"),
            type=str(event.get("type") or "agent-event"),
            description=event["alert"],
            context=context if isinstance(context, Mapping) else None,
        )
        append_alert(s.paths.alerts, record)
        s.events.append("alert-raised", cause=s.cause(), related=related, alert=record["id"])
    else:
        s.events.append("new-event-ignored", cause=s.cause(), related=related, event=event)


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _add_task(s: Services, text: str, priority: int) -> str:
    added = [""]

    def edit(current: str) -> str:
        new_text, added[0] = tasks_md.add_task(current, text, priority=priority)
        return new_text

    s.edit(s.paths.tasks, edit)
    return added[0]


def _failed_attempt(
    s: Services, ws: Workspace, key: str, run: AgentRun, book: Bookkeeping
) -> Outcome:
    """Count a failed attempt at a task or human input and escalate as the policy says."""
    book, count = book.failed(key)
    escalation = should_escalate_failures(key, ws.policy, count)
    if escalation.escalate and escalation.reason:
        now = s.clock.now()
        if escalation.blocking:
            body = f"Last log: {run.log_path}"
            s.reporter.ask(
                ws.policy, now=now, related=key, title=escalation.reason, body=body, cause=s.cause()
            )
            book = book.hold(key, escalation.reason)
        else:
            s.reporter.notify(
                ws.policy, now=now, related=key, message=escalation.reason, cause=s.cause()
            )
    return Outcome(book, run, failed=True)


# -- the three kinds of work ----------------------------------------------------------------


def _human_input(s: Services, ws: Workspace, item: WorkItem, book: Bookkeeping) -> Outcome:
    entry = next(h for h in ws.human.inputs if h.key == item.id and h.status == "pending")
    questions = tuple(q for q in ws.human.inputs if q.status == "question")
    values = prompts.human_input_values(entry, questions)
    run = s.run_agent(ws, "human-input", entry.key, values)
    if run.cancelled:
        return Outcome(book, run)
    signals = _believed(run)
    asked = _common(s, ws, run, entry.key)
    if _finished(signals, "HUMAN_INPUT_PROCESSED"):
        _processed(s, ws, entry, questions, run)
        return Outcome(book.answered().succeeded(entry.key), run, done=True)
    if asked:
        return Outcome(book.hold(entry.key, _reason(signals)), run)
    if _excused(run):
        return Outcome(book, run)
    return _failed_attempt(s, ws, entry.key, run, book)  # not processed: try again


def _processed(
    s: Services,
    ws: Workspace,
    entry: human_md.HumanInput,
    questions: tuple[human_md.HumanInput, ...],
    run: AgentRun,
) -> None:
    """Mark the input processed; the human has answered, so whatever waited on them goes on."""
    now = s.clock.now()

    def edit(text: str) -> str:
        note = f"processed by the agent ({run.log_path.name})"
        text = human_md.mark_processed(text, entry.key, processed_at=iso(now), note=note)
        for question in questions:
            text = human_md.mark_answered(text, question.key)
        return text

    s.edit(s.paths.human, edit)
    waiting = {a.id for a in ws.open_alerts if a.status == "escalated"}
    if entry.related_alert is not None:
        waiting.add(entry.related_alert)
    for alert_id in sorted(waiting):
        alert = s.latest_alert(alert_id)
        if alert is not None and alert.status != "resolved":
            # Back in the queue, with the human's words in the agent's next alert prompt.
            append_alert(
                s.paths.alerts, status_update(alert, "pending", now, humanGuidance=entry.content)
            )
    s.out(f"✅ Human input {entry.key} processed")


def _alert(
    s: Services, ws: Workspace, item: WorkItem, book: Bookkeeping, minutes_since_progress: float
) -> Outcome:
    alert = next(a for a in ws.open_alerts if a.id == item.id)  # selected: not resolved
    attempts = alert.context.get("attempt", 0)
    escalation = should_escalate(
        alert,
        ws.policy,
        attempts=attempts if _is_count(attempts) else 0,
        minutes_since_progress=minutes_since_progress,
    )
    now = s.clock.now()
    if escalation.escalate and escalation.reason and not book.was_told(alert.id, escalation.reason):
        # Told once per reason: after the human answers, the agent gets to work.
        book = book.told(alert.id, escalation.reason, iso(now))
        if escalation.blocking:
            append_alert(s.paths.alerts, status_update(alert, "escalated", now))
            body = f"[{alert.severity.upper()}] {alert.source}: {alert.description}"
            s.reporter.ask(
                ws.policy, now=now, related=alert.id, title=escalation.reason, body=body, cause=None
            )
            s.out(f"⏸️  Escalated {alert.id} to the human: {escalation.reason}")
            return Outcome(book)
        message = f"{escalation.reason}: [{alert.severity}] {alert.description}"
        s.reporter.notify(ws.policy, now=now, related=alert.id, message=message, cause=None)
    started = status_update(alert, "in-progress", now)
    append_alert(s.paths.alerts, started)
    guidance = alert.raw.get("humanGuidance")
    values = prompts.alert_values(
        alert,
        ws.policy,
        int(started["context"]["attempt"]),
        guidance if isinstance(guidance, str) else "",
    )
    run = s.run_agent(ws, "alert", alert.id, values)
    if run.cancelled:
        return Outcome(book, run)
    signals = _believed(run)
    asked = _common(s, ws, run, alert.id)  # resolves the alerts <resolve_alert> names
    latest = s.latest_alert(alert.id) or alert
    if latest.status == "resolved" or _finished(signals, "ALERT_RESOLVED"):
        if latest.status != "resolved":
            append_alert(s.paths.alerts, status_update(latest, "resolved", s.clock.now()))
        s.out(f"✅ Alert resolved: {alert.id}")
        return Outcome(book.alert_closed(alert.id), run, done=True)
    if asked:
        append_alert(s.paths.alerts, status_update(latest, "escalated", s.clock.now()))
        return Outcome(book, run)
    return Outcome(book, run, failed=_attempt_failed(run, changed=False))


def _task(s: Services, ws: Workspace, item: WorkItem, book: Bookkeeping, feedback: str) -> Outcome:
    task = _task_of(ws.tasks, item.id)
    if task.status == "todo":
        s.edit(s.paths.tasks, lambda text: tasks_md.set_status(text, item.id, "in-progress"))
    run = s.run_agent(ws, "task", item.id, prompts.task_values(task, feedback))
    if run.cancelled:
        return Outcome(book, run)
    signals = _believed(run)
    asked = _common(s, ws, run, item.id)
    # Named as the workspace names it, so the parse cached by the checkbox edit above is used.
    after = tasks_md.find(tasks_md.parse(read_text(s.paths.tasks), str(s.paths.tasks)), item.id)
    ticked = after is not None and after.status == "complete"
    if ticked or _finished(signals, "TASK_COMPLETE"):
        if not ticked:
            s.edit(s.paths.tasks, lambda text: tasks_md.set_status(text, item.id, "complete"))
        s.out(f"✅ Task complete: {item.id}")
        return Outcome(book.succeeded(item.id), run, done=True)
    if after is None or after.status == "cancelled":
        s.out(f"✅ Task {item.id} was cancelled or removed by the agent")
        return Outcome(book.succeeded(item.id), run, done=True)
    if asked:
        return Outcome(book.hold(item.id, _reason(signals)), run)
    if _attempt_failed(run, changed=_moved(task, after)):
        return _failed_attempt(s, ws, item.id, run, book)
    return Outcome(book.succeeded(item.id), run)


def _task_of(doc: tasks_md.TaskList, key: str) -> Task:
    """The first task `key` names (see `task_key`): found by id, fast, when all tasks have one."""
    found = None if tasks_md.missing_ids(doc) else tasks_md.find(doc, key)
    return found if found is not None else next(t for t in doc.tasks if task_key(t) == key)


def _moved(before: Task, after: Task) -> bool:
    """The agent visibly worked on the task: its text or a subtask changed."""

    def shape(task: Task) -> tuple[object, ...]:
        return (task.text, tuple((sub.text, sub.status) for sub in task.subtasks))

    return shape(before) != shape(after)
