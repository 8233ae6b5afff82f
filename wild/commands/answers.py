"""Answering an alert with one of its choices, and ticking a task: for the CLI and the dashboard.

An answer is the same line the loop appends for an agent's `<resolve_alert>`
(`wild.loop.judge`): the alert resolved, with `resolution: {"choice": …, "note": …}`. Both
refuse to act on a stale view: an alert that is no longer open, or a task whose status is not
the one the caller saw, is a `ConflictError` naming the file, as any compare-and-swap is.
"""

from __future__ import annotations

from datetime import datetime

from wild.errors import ConflictError, UsageError, WildError
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import status_update
from wild.paths import WildPaths
from wild.store.alerts_log import append_alert
from wild.store.files import update_text
from wild.store.work_files import read_alerts
from wild.workspace import require_initialised


def answer_alert(
    paths: WildPaths, alert_id: str, choice: str, *, now: datetime, note: str | None = None
) -> None:
    """Resolve the open alert `alert_id` with `choice` (one of its choices, when it has any)."""
    require_initialised(paths)
    open_alerts, _ = read_alerts(paths)
    alert = next((a for a in open_alerts if a.id == alert_id), None)
    if alert is None:
        raise ConflictError(
            f"{paths.alerts}: alert {alert_id} is not open any more (resolved meanwhile, or no"
            " such id); reload to see its current state"
        )
    if alert.choices and choice not in alert.choices:
        raise UsageError(
            f"{paths.alerts}:{alert.line}: alert {alert_id} offers {', '.join(alert.choices)};"
            f" {choice!r} is not one of them"
        )
    if not choice.strip():
        raise UsageError(f"answering alert {alert_id} needs a choice")
    append_alert(
        paths.alerts,
        status_update(alert, "resolved", now, resolution={"choice": choice, "note": note}),
    )


def tick_task(
    paths: WildPaths, task_id: str, status: tasks_md.TaskStatus, *, seen: tasks_md.TaskStatus
) -> None:
    """Set a task's checkbox to `status`, if it still has the status `seen` the caller saw."""
    require_initialised(paths)
    problem: list[WildError] = []

    def edit(current: str) -> str:
        problem.clear()
        task = next((t for t in tasks_md.parse(current).tasks if t.id == task_id), None)
        if task is None:
            problem.append(WildError(f"{paths.tasks}: no task {task_id}; reload the page"))
            return current
        if task.status != seen:
            problem.append(
                ConflictError(
                    f"{paths.tasks}:{task.span.start + 1}: {task_id} is {task.status} now, not"
                    f" {seen}: the file changed since you looked; reload and try again"
                )
            )
            return current
        return tasks_md.set_status(current, task_id, status)

    update_text(paths.tasks, edit, paths.lock)
    if problem:
        raise problem[0]
