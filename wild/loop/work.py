"""Starting one piece of work, as pure decisions: no file is touched here.

`start` says how the selected human input, alert, task or monitoring look begins (file edits,
an escalation, the agent run); `start_planning` asks the agent for the plan when no work is
left. How a finished run is judged is `wild.loop.judge`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

from wild import prompts
from wild.clock import iso, parse_time
from wild.completion.verdict import Verdict
from wild.loop.model import (
    Action,
    AppendAlert,
    Ask,
    EditFile,
    LoopModel,
    Moment,
    Notify,
    RunAgent,
    Running,
    Say,
)
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import status_update
from wild.parsers.state import CurrentWork
from wild.parsers.tasks import Task
from wild.policy.escalation import should_escalate
from wild.policy.model import HumanPolicy
from wild.record import replace
from wild.runs import stage as stages
from wild.selection import Selection, WorkItem, task_key

PLANNING = "planning"  # the work key of planning runs: their failures, their holds
CHECKS = "checks"  # the work key of runs that fix failing completion checks


# -- starting work ---------------------------------------------------------------------------


def start(
    model: LoopModel, item: WorkItem, policy: HumanPolicy, at: Moment
) -> tuple[LoopModel, tuple[Action, ...]]:
    """The actions that begin work on the selected item; the last one runs the agent, unless
    an escalation to the human comes first."""
    if item.kind == "human-input":
        entry = next(h for h in model.ws.human.inputs if h.key == item.id and h.status == "pending")
        questions = tuple(q for q in model.ws.human.inputs if q.status == "question")
        running = Running("human-input", entry.key, entry=entry, questions=questions)
        return _run(model, running, prompts.human_input_values(entry, questions), at)
    if item.kind == "alert":
        return _start_alert(model, item, policy, at, minutes_since_progress(model, at))
    task = task_of(model.ws.tasks, item.id)
    edits: tuple[Action, ...] = ()
    if task.status == "todo":
        edits = (EditFile("tasks", lambda text: tasks_md.set_status(text, item.id, "in-progress")),)
    feedback = notes(model)
    sweep = next((s for s in model.ws.runs.sweeps.values() if s.task == item.id), None)
    if sweep is not None:  # a sweep's analysis: the run table, not the task prompt
        # Its metrics are read from the runs' files: the driver adds them (RunAgent.analysis).
        values = {"feedback": prompts.feedback_block(feedback)}
        running = Running("analysis", item.id, task=task)
        model, actions = _run(model, running, values, at, analysis=sweep.id)
        return model, (*edits, *actions)
    model, actions = _run(
        model, Running("task", item.id, task=task), prompts.task_values(task, feedback), at
    )
    return model, (*edits, *actions)


def start_monitoring(
    model: LoopModel, selection: Selection, at: Moment
) -> tuple[LoopModel, tuple[Action, ...]]:
    """One agent look at the jobs behind the barriers all remaining work waits on."""
    ids = ",".join(b.id for b in selection.waiting_barriers)
    values = prompts.monitoring_values(selection.waiting_barriers)
    return _run(model, Running("monitoring", ids), values, at)


def start_planning(model: LoopModel, at: Moment) -> tuple[LoopModel, tuple[Action, ...]]:
    """No work is left: the agent gets the goal and writes the plan, or confirms it is met."""
    tasks = model.ws.tasks.tasks
    running = Running("planning", PLANNING, tasks_before=len(tasks))
    values = {**prompts.planning_values(tasks), "feedback": prompts.feedback_block(notes(model))}
    return _run(model, running, values, at)


def stuck_plan_question(selection: Selection | None) -> tuple[Action, ...]:
    """A question to the human when every open task waits and the plan itself is wrong (a
    dependency on a task that does not exist, a cycle, a duplicate id): nothing that happens
    later can free such a task, so sleeping without a word would wait forever."""
    if selection is None or selection.kind != "blocked" or not selection.problems:
        return ()
    body = "\n".join(f"- {problem}" for problem in selection.problems) + (
        "\nFix the ids or the dependsOn lines in .wild/tasks.md (the loop wakes when it"
        " changes), or answer with what should be done."
    )
    title = "the plan cannot go on: its tasks wait on tasks that never run"
    return (Ask(PLANNING, title, body, None),)


def start_checks(
    model: LoopModel, verdict: Verdict, at: Moment
) -> tuple[LoopModel, tuple[Action, ...]]:
    """No work is left but completion checks fail: the agent gets the goal and what failed."""
    return _run(model, Running("checks", CHECKS), prompts.checks_values(verdict.failing), at)


def _run(
    model: LoopModel,
    running: Running,
    values: Mapping[str, object],
    at: Moment,
    analysis: str | None = None,
) -> tuple[LoopModel, tuple[Action, ...]]:
    work = CurrentWork(running.work_type, running.work_id, iso(at.now))
    state = replace(model.state, current_work=work)
    model = replace(model, running=running, state=state, resumed=None)
    iteration = model.state.iteration + 1
    values = {
        "research": research_block(model),
        **values,
        "answers": prompts.answers_block(model.book.answers.get(running.work_id)),
    }
    return model, (RunAgent(iteration, running.work_type, running.work_id, values, analysis),)


def _start_alert(
    model: LoopModel, item: WorkItem, policy: HumanPolicy, at: Moment, minutes: float
) -> tuple[LoopModel, tuple[Action, ...]]:
    alert = next(a for a in model.ws.open_alerts if a.id == item.id)  # selected: not resolved
    attempts = alert.context.get("attempt", 0)
    escalation = should_escalate(
        alert,
        policy,
        attempts=attempts if is_count(attempts) else 0,
        minutes_since_progress=minutes,
    )
    book, actions = model.book, list[Action]()
    if escalation.escalate and escalation.reason and not book.was_told(alert.id, escalation.reason):
        # Told once per reason: after the human answers, the agent gets to work.
        book = book.told(alert.id, escalation.reason, iso(at.now))
        if escalation.blocking:
            body = f"[{alert.severity.upper()}] {alert.source}: {alert.description}"
            escalated = (
                AppendAlert(status_update(alert, "escalated", at.now)),
                Ask(alert.id, escalation.reason, body, cause=None),
                Say(f"⏸️  Escalated {alert.id} to the human: {escalation.reason}"),
            )
            return model.with_book(book), escalated
        message = f"{escalation.reason}: [{alert.severity}] {alert.description}"
        actions.append(Notify(alert.id, message, cause=None))
    started = status_update(alert, "in-progress", at.now)
    if model.resumed == alert.id and alert.status == "in-progress":
        # The killed loop's run at it was no attempt of the agent's (see wild.loop.recovery).
        started["context"]["attempt"] = max(1, started["context"]["attempt"] - 1)
    actions.append(AppendAlert(started))
    guidance = alert.raw.get("humanGuidance")
    values = prompts.alert_values(
        alert,
        policy,
        int(started["context"]["attempt"]),
        guidance if isinstance(guidance, str) else "",
    )
    model, run = _run(model.with_book(book), Running("alert", alert.id), values, at)
    return model, (*actions, *run)


def notes(model: LoopModel) -> str:
    """The last `--context-window` iteration summaries, one per line."""
    window = model.options.context_window
    recent = model.state.recent_summaries[-window:] if window else ()
    return "\n".join(f"- {s}" for s in recent)


def research_block(model: LoopModel) -> str:
    """The stage as a prompt section: the sweep template while exploring, else the runs."""
    index = model.ws.runs
    now = stages.stage_of(index.sweeps, index.runs, model.ws.open_alerts, frozenset())
    if now == "exploring":
        return prompts.SWEEP_HELP + "\n"
    counts = stages.counts(index.runs.values()).to_json()
    said = ", ".join(f"{n} {what}" for what, n in counts.items() if n)
    return f"## Runs\nA sweep is running ({said}); `wild --runs` lists them.\n"


def minutes_since_progress(model: LoopModel, at: Moment) -> float:
    """Since the last progress (or the start): what the Stuck Duration check weighs."""
    last = parse_time(model.book.last_progress_at) or parse_time(model.state.started_at)
    if last is None:
        return 0.0
    return max(0.0, (at.now - last).total_seconds() / 60.0)


def task_of(doc: tasks_md.TaskList, key: str) -> Task:
    """The first task `key` names (see `task_key`): found by id, fast, when all tasks have one."""
    found = None if tasks_md.missing_ids(doc) else tasks_md.find(doc, key)
    return found if found is not None else next(t for t in doc.tasks if task_key(t) == key)


def is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
