"""The records a parse of tasks.md yields, and the lookups callers make on them."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from wild.parsers.lines import Problem, Span
from wild.record import record

TaskStatus = Literal["todo", "in-progress", "complete", "cancelled"]

DEFAULT_PRIORITY = 2
# The most urgent priority a task wild adds can get (`wild --add-task` documents "1 is the
# highest"); a human may still write [P0] by hand, and it is read as written.
HIGHEST_PRIORITY = 1


@record(slots=True)
class Subtask:
    """An indented checkbox under a task; part of its parent's work."""

    text: str
    status: TaskStatus
    line: int  # 1-based, as editors show it


class Task(NamedTuple):
    """One top-level task line and the indented lines that belong to it.

    A named tuple rather than a frozen dataclass, as `WorkItem` is: a parse makes one per task
    (often 10,000), and a tuple is made about four times faster than a frozen dataclass's
    slots are set (docs/benchmarks.md, "Parse + select, third pass"). It is as immutable;
    change a copy with `task._replace(status=...)`.
    """

    id: str | None
    text: str
    priority: int
    status: TaskStatus
    depends_on: tuple[str, ...]
    blocked_by: tuple[str, ...]
    subtasks: tuple[Subtask, ...]
    span: Span
    check: str | None = None  # a `- check: <command>` line: what proves the task done


# A frozen dataclass's `__init__` sets each field through `object.__setattr__`, which looks the
# name up on every call; `Span(start, end)` cost a parse of 10,000 tasks ~5 ms. The parser
# builds its spans through the slots' own setters instead, and each task as the tuple it is
# (`Task(...)` goes through a generated `__new__` with keyword handling).
_new = object.__new__
_set_start: Any = Span.__dict__["start"].__set__
_set_end: Any = Span.__dict__["end"].__set__
_new_tuple = tuple.__new__


def new_task(  # noqa: PLR0917 (one argument per field, in the fields' order: the parser calls it per task)
    task_id: str | None,
    text: str,
    priority: int,
    status: TaskStatus,
    depends_on: tuple[str, ...],
    blocked_by: tuple[str, ...],
    subtasks: tuple[Subtask, ...],
    start: int,
    end: int,
    check: str | None,
) -> Task:
    """`Task(task_id, ..., Span(start, end), check)`, made several times faster (every field
    of both records is set: tests/parsers/test_tasks.py checks it against their fields)."""
    span = _new(Span)
    _set_start(span, start)
    _set_end(span, end)
    task: Task = _new_tuple(
        Task, (task_id, text, priority, status, depends_on, blocked_by, subtasks, span, check)
    )
    return task


@record(slots=True)
class TaskList:
    """The whole file: its lines (lossless), its tasks in file order, what was not understood."""

    lines: tuple[str, ...]
    tasks: tuple[Task, ...]
    problems: tuple[Problem, ...]


def missing_ids(doc: TaskList) -> bool:
    """Whether some task has no id yet (`assign_missing_ids` would give it one)."""
    return any(task.id is None for task in doc.tasks)


def render(doc: TaskList) -> str:
    """The exact text the document was parsed from."""
    return "".join(doc.lines)


def find(doc: TaskList, task_id: str) -> Task | None:
    """The first task with this id, or None."""
    for task in doc.tasks:
        if task.id == task_id:
            return task
    return None
