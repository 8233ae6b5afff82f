"""Which open tasks can run, in what order, and which wait: the task part of the queue."""

from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple, cast

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
    blocked: list[WorkItem]  # the waiting tasks' "blocked" queue items, file order
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


def _blocked(task: Task, key: str, reason: str, waiting_on: tuple[str, ...] = ()) -> WorkItem:
    """The queue item of a task that waits (the plan makes the common one inline, faster)."""
    return WorkItem(
        "blocked", key, task.text, reason, waiting_on, priority=task.priority, status=task.status
    )


_ID_OF = attrgetter("id")
_new_tuple = tuple.__new__


def _first_of_each_id(tasks: tuple[Task, ...]) -> tuple[dict[str, Task], bool]:
    """The first task of each id (work is found by id), and whether some id is used twice.

    A dict built from the end keeps the first, made in C: a `setdefault` per task cost ~1 ms
    of a 10,000-task selection.
    """
    ids = list(map(_ID_OF, tasks))
    found: dict[str | None, Task] = dict(zip(reversed(ids), reversed(tasks), strict=True))
    found.pop(None, None)
    return cast("dict[str, Task]", found), len(found) + ids.count(None) < len(ids)


def _duplicate(task: Task, task_id: str) -> tuple[WorkItem, str]:
    """A second task with the same id could never be run safely (work is found by id): it
    waits until a human renames it. Its queue item and its problem."""
    line = task.span.start + 1
    duplicate = f"duplicate id {task_id} (line {line}); give it a new id"
    return _blocked(task, f"line-{line}", duplicate), f"{task_id}: {duplicate}"


def _in_file_order(
    duplicates: list[tuple[int, WorkItem]], places: list[int], items: list[WorkItem]
) -> list[WorkItem]:
    """The duplicates' items (place, item) merged among the other waiting tasks' items."""
    merged = duplicates + list(zip(places, items, strict=True))
    merged.sort()
    return [item for _, item in merged]


def plan_tasks(snapshot: WorkSnapshot) -> TaskPlan:
    """One pass over every task, then one over those with dependencies or barriers (which
    need every id known); a reason is written only for a task that waits.

    Fast on purpose: the loop selects on every iteration, often among 10,000 tasks.
    """
    tasks = snapshot.tasks
    awaiting = snapshot.awaiting_human
    barrier_of = {b.id: b for b in snapshot.barriers}
    by_id, duplicated = _first_of_each_id(tasks)
    active: list[int] = []
    todo: list[tuple[int, int]] = []
    later: list[int] = []
    checked: list[Task] = []
    duplicates: list[tuple[int, WorkItem]] = []
    problems: list[tuple[int, str]] = []
    for at, task in enumerate(tasks):
        status = task.status
        if status not in OPEN:
            continue
        task_id = task.id
        if duplicated and task_id is not None and by_id[task_id] is not task:
            waiting, problem = _duplicate(task, task_id)
            duplicates.append((at, waiting))
            problems.append((at, problem))
        elif task_id is None or task.depends_on or task.blocked_by or task_id in awaiting:
            later.append(at)
            checked.append(task)
        elif status == "todo":
            todo.append((task.priority, at))  # most tasks: nothing to wait for
        else:
            active.append(at)
    cycles = cycle_members(by_id, [t for t in checked if t.id is not None and t.depends_on])
    # The waiting tasks' items in file order (the duplicates are merged in below).
    blocked: list[WorkItem] = []
    blocked_at: list[int] = []
    # `WorkItem(...)` with keywords costs three times the tuple it makes: the waiting tasks'
    # items (often thousands) are made as tuples, every field in WorkItem's order
    # (tests/test_selection.py compares them with `WorkItem(...)`).
    for at, task in zip(later, checked, strict=True):
        key = task.id if task.id is not None else task_key(task)
        if key in awaiting:
            blocked.append(_blocked(task, key, HUMAN_WAIT))
            blocked_at.append(at)
            continue
        reason, waiting_on, unknown = blocked_reason(task, key, by_id, barrier_of, cycles)
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
        blocked.append(_new_tuple(WorkItem, item))
        blocked_at.append(at)
        # Typos in task ids and cycles need a human; a barrier the agent has not written
        # yet is normal (it creates one when it launches the job), so only the reason says so.
        if unknown or key in cycles:
            problems.append((at, f"{key}: {reason}"))
    if duplicates:
        blocked = _in_file_order(duplicates, blocked_at, blocked)
    active.sort()
    problems.sort()
    return TaskPlan(tasks, active, todo, blocked, [problem for _, problem in problems])
