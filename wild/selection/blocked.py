"""Why a task waits: the reason `wild --list-work` shows, and the barriers it waits on."""

from __future__ import annotations

from collections.abc import Mapping

from wild.parsers.barriers import Barrier
from wild.parsers.tasks import Task
from wild.selection.items import WorkItem, task_key


def blocked_reason(
    task: Task,
    by_id: Mapping[str, Task],
    barriers: Mapping[str, Barrier],
    cycles: Mapping[str, tuple[str, ...]],
) -> tuple[str | None, tuple[str, ...]]:
    """Why `task` cannot start now (None when it can), and the barriers it waits on."""
    reasons: list[str] = []
    key = task_key(task)
    if key in cycles:
        reasons.append("dependency cycle: " + " → ".join(cycles[key]))
    for dep in task.depends_on:
        other = by_id.get(dep)
        if other is None:
            reasons.append(f"depends on unknown task {dep}")
        elif other.status == "cancelled":
            reasons.append(f"depends on {dep}, which was cancelled")
        elif other.status != "complete" and key not in cycles:
            reasons.append(f"waiting for task {dep}")
    waiting_on: list[str] = []
    for barrier_id in task.blocked_by:
        barrier = barriers.get(barrier_id)
        if barrier is None:
            reasons.append(f"blocked by unknown barrier {barrier_id}")
        elif barrier.status == "failed":
            reasons.append(f"barrier {barrier_id} failed")
            waiting_on.append(barrier_id)
        elif barrier.status != "satisfied":
            result = f": {barrier.result}" if barrier.result else ""
            reasons.append(f"waiting for barrier {barrier_id}{result}")
            waiting_on.append(barrier_id)
    return ("; ".join(reasons) if reasons else None), tuple(waiting_on)


def blocked_item(
    tasks: tuple[Task, ...], at: int, key: str, reason: str, waiting_on: tuple[str, ...]
) -> WorkItem:
    """The queue item of the task at `at` in `tasks`, which waits for `reason`."""
    task = tasks[at]
    return WorkItem(
        "blocked", key, task.text, reason, waiting_on, priority=task.priority, status=task.status
    )
