"""Which open tasks can run, in what order, and which wait: the task part of the queue."""

from __future__ import annotations

from typing import NamedTuple

from wild.parsers.tasks import Task
from wild.selection.blocked import blocked_reason
from wild.selection.cycles import cycle_members
from wild.selection.items import HUMAN_WAIT, OPEN, WorkItem, WorkSnapshot, task_key


class TaskPlan(NamedTuple):
    """Which open tasks can run and which wait; the waiting ones' queue items are made.

    Tasks are named by their place in `tasks` (file order).
    """

    tasks: tuple[Task, ...]
    active: list[int]  # can run, already in progress: file order
    todo: list[tuple[int, int]]  # can start: (priority, place)
    blocked: list[tuple[int, WorkItem]]  # (place, its "blocked" queue item), file order
    problems: list[str]

    def ready(self) -> list[Task]:
        """The runnable tasks in queue order: those in progress, then by priority."""
        return [self.tasks[at] for at in self.active + [at for _, at in sorted(self.todo)]]

    def ready_items(self) -> list[WorkItem]:
        """The runnable tasks' queue items, in queue order."""
        return [
            WorkItem(
                "task",
                task.id if task.id is not None else task_key(task),
                task.text,
                priority=task.priority,
                status=task.status,
            )
            for task in self.ready()
        ]

    def blocked_items(self) -> list[WorkItem]:
        """The waiting tasks' queue items, in file order."""
        return [item for _, item in self.blocked]


def _blocked(task: Task, key: str, reason: str, waiting_on: tuple[str, ...] = ()) -> WorkItem:
    """The queue item of a task that waits (the plan makes the common one inline, faster)."""
    return WorkItem(
        "blocked", key, task.text, reason, waiting_on, priority=task.priority, status=task.status
    )


def plan_tasks(snapshot: WorkSnapshot) -> TaskPlan:
    """One pass over every task, then one over those with dependencies or barriers (which
    need every id known); a reason is written only for a task that waits.

    Fast on purpose: the loop selects on every iteration, often among 10,000 tasks.
    """
    tasks = snapshot.tasks
    awaiting = snapshot.awaiting_human
    by_id: dict[str, Task] = {}
    first_with = by_id.setdefault
    active: list[int] = []
    todo: list[tuple[int, int]] = []
    later: list[int] = []
    blocked: list[tuple[int, WorkItem]] = []
    problems: list[tuple[int, str]] = []
    for at, task in enumerate(tasks):
        task_id = task.id
        status = task.status
        if task_id is not None and first_with(task_id, task) is not task:
            if status in OPEN:
                # Work is found by id, so a second task with the same id could never be run
                # safely: it waits until a human renames it.
                line = task.span.start + 1
                duplicate = f"duplicate id {task_id} (line {line}); give it a new id"
                blocked.append((at, _blocked(task, f"line-{line}", duplicate)))
                problems.append((at, f"{task_id}: {duplicate}"))
        elif status not in OPEN:
            continue
        elif task_id is None or task.depends_on or task.blocked_by or task_id in awaiting:
            later.append(at)
        elif status == "todo":
            todo.append((task.priority, at))  # most tasks: nothing to wait for
        else:
            active.append(at)
    checked = [tasks[at] for at in later]
    linked = [(t.id, t) for t in checked if t.id is not None and t.depends_on]
    cycles = cycle_members(by_id, linked)
    barriers = {b.id: b for b in snapshot.barriers}
    # `WorkItem(...)` with keywords costs three times the tuple it makes: the waiting tasks'
    # items (often thousands) are made as tuples, every field in WorkItem's order
    # (tests/test_selection.py compares them with `WorkItem(...)`).
    new = tuple.__new__
    for at, task in zip(later, checked, strict=True):
        key = task.id if task.id is not None else task_key(task)
        if key in awaiting:
            blocked.append((at, _blocked(task, key, HUMAN_WAIT)))
            continue
        reason, waiting_on, unknown = blocked_reason(task, key, by_id, barriers, cycles)
        if reason is None:
            if task.status == "in-progress":
                active.append(at)
            else:
                todo.append((task.priority, at))
            continue
        item = (  # urgent False and severity None: WorkItem's defaults
            "blocked",
            key,
            task.text,
            reason,
            waiting_on,
            False,
            None,
            task.priority,
            task.status,
        )
        blocked.append((at, new(WorkItem, item)))
        # Typos in task ids and cycles need a human; a barrier the agent has not written
        # yet is normal (it creates one when it launches the job), so only the reason says so.
        if unknown or key in cycles:
            problems.append((at, f"{key}: {reason}"))
    active.sort()
    blocked.sort()
    problems.sort()
    return TaskPlan(tasks, active, todo, blocked, [problem for _, problem in problems])
