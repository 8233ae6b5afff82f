"""What a task's own check decides (`- check: <command>` in tasks.md), pure.

A task with a check is done only when its command passes after the agent said so (or ticked
it). A failing check is a failed attempt: a box the agent ticked itself is set back to `[/]`
with a minimal edit, and the next prompt's notes say why. A command no human approved cannot
prove anything: the human is asked to approve it (`wild --approve TASK`) and the task waits.
"""

from __future__ import annotations

from collections.abc import Callable

from wild.loop.judge import failed_attempt
from wild.loop.model import Action, Ask, Continue, EditFile, Log, LoopModel, Say, Step, TaskVerified
from wild.parsers import tasks as tasks_md
from wild.parsers.state import push_summary
from wild.policy.model import HumanPolicy
from wild.record import replace

# How much of a failing check's output the next prompt's notes carry.
NOTE_TAIL_CHARS = 600


def task_verified(model: LoopModel, event: TaskVerified, policy: HumanPolicy) -> Step:
    task_id, outcome = event.task_id, event.outcome
    cause = model.agent_event
    logged = Log(
        "task-check", cause, {"task": task_id, "passed": outcome.passed, "result": outcome.summary}
    )
    actions: list[Action] = [logged]
    state = model.state
    if outcome.passed:
        if not event.ticked_by_agent:
            actions.append(EditFile("tasks", _set(task_id, "complete")))
        actions.append(Say(f"✅ Task complete: {task_id} (its check passed: {outcome.summary})"))
        state = replace(state, current_work=None)
        model = replace(model, state=state).with_book(model.book.succeeded(task_id))
        return Step(model, (*actions, Continue()))
    if event.ticked_by_agent:
        actions.append(EditFile("tasks", _set(task_id, "in-progress")))
    if outcome.unapproved:
        reason = approval_reason(task_id)
        body = f"Read it in .wild/tasks.md, then run `wild --approve {task_id}`."
        actions += [Ask(task_id, reason, body, cause), Say(f"⏸️  {reason}")]
        model = model.with_book(model.book.hold(task_id, reason))
        return Step(model, (*actions, Continue()))
    note = f"task {task_id} is not done: its check failed ({outcome.summary})"
    if outcome.tail:
        note += "; the end of its output:\n" + outcome.tail[-NOTE_TAIL_CHARS:]
    actions.append(Say(f"❌ Task {task_id} is not done: its check failed ({outcome.summary})"))
    book, escalated = failed_attempt(model, task_id, f"Check: {outcome.summary}", policy)
    failures = state.consecutive_failures + 1
    state = push_summary(state, note, model.options.context_window)
    state = replace(state, consecutive_failures=failures)
    model = replace(model, state=state).with_book(book)
    return Step(model, (*actions, *escalated, Continue()))


def approval_reason(task_id: str) -> str:
    """Why a task waits for the human when its check's command is not approved; a `recheck`
    request (`wild --approve TASK`) ends every such wait."""
    return f"the check of {task_id} awaits your approval"


def _set(task_id: str, status: tasks_md.TaskStatus) -> Callable[[str], str]:
    return lambda text: tasks_md.set_status(text, task_id, status)
