"""Why a task waits: the reason `wild --list-work` shows, and the barriers it waits on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # records named, not made
    from wild.parsers.barriers import Barrier
    from wild.parsers.tasks import Task

_WAITING_FOR_TASK = "waiting for task "


def blocked_reason(
    task: Task,
    key: str,
    by_id: Mapping[str, Task],
    barriers: Mapping[str, Barrier],
    cycles: Mapping[str, tuple[str, ...]],
) -> tuple[str | None, tuple[str, ...], bool]:
    """Why `task` (whose `task_key` is `key`) cannot start now (None when it can), the
    barriers it waits on, and whether it depends on a task that does not exist (a typo).

    Called for every task with dependencies or barriers on every selection: one pass, and
    the common case (one unfinished dependency) builds one string.
    """
    cycle = cycles.get(key)
    depends_on = task.depends_on
    if cycle is None and len(depends_on) == 1 and not task.blocked_by:
        # Most tasks that wait: on one task, found and not cancelled (the rest goes below).
        dep = depends_on[0]
        other = by_id.get(dep)
        if other is not None and other.status != "cancelled":
            if other.status == "complete":
                return None, (), False
            return _WAITING_FOR_TASK + dep, (), False
    reasons: list[str] = []
    unknown = False
    if cycle is not None:
        reasons.append("dependency cycle: " + " → ".join(cycle))
    for dep in depends_on:
        other = by_id.get(dep)
        if other is None:
            unknown = True
            reasons.append(f"depends on unknown task {dep}")
        elif other.status == "complete":
            continue
        elif other.status == "cancelled":
            reasons.append(f"depends on {dep}, which was cancelled")
        elif cycle is None:
            reasons.append(_WAITING_FOR_TASK + dep)
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
    if not reasons:
        return None, (), unknown
    return "; ".join(reasons), tuple(waiting_on), unknown
