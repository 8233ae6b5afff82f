"""The records a parse of tasks.md yields, and the lookups callers make on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from wild.parsers.lines import Problem, Span

TaskStatus = Literal["todo", "in-progress", "complete", "cancelled"]

DEFAULT_PRIORITY = 2
# The most urgent priority a task wild adds can get (`wild --add-task` documents "1 is the
# highest"); a human may still write [P0] by hand, and it is read as written.
HIGHEST_PRIORITY = 1


@dataclass(frozen=True, slots=True)
class Subtask:
    """An indented checkbox under a task; part of its parent's work."""

    text: str
    status: TaskStatus
    line: int  # 1-based, as editors show it


@dataclass(frozen=True, slots=True)
class Task:
    """One top-level task line and the indented lines that belong to it."""

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
# name up on every call: at 10,000 tasks a parse spent a third of its time there. The parser
# builds its records through the slots' own setters instead; the records are the same.
_new = object.__new__
_set_start: Any = Span.__dict__["start"].__set__
_set_end: Any = Span.__dict__["end"].__set__
_set_id: Any = Task.__dict__["id"].__set__
_set_text: Any = Task.__dict__["text"].__set__
_set_priority: Any = Task.__dict__["priority"].__set__
_set_status: Any = Task.__dict__["status"].__set__
_set_depends_on: Any = Task.__dict__["depends_on"].__set__
_set_blocked_by: Any = Task.__dict__["blocked_by"].__set__
_set_subtasks: Any = Task.__dict__["subtasks"].__set__
_set_span: Any = Task.__dict__["span"].__set__
_set_check: Any = Task.__dict__["check"].__set__


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
    task = _new(Task)
    _set_id(task, task_id)
    _set_text(task, text)
    _set_priority(task, priority)
    _set_status(task, status)
    _set_depends_on(task, depends_on)
    _set_blocked_by(task, blocked_by)
    _set_subtasks(task, subtasks)
    _set_span(task, span)
    _set_check(task, check)
    return task


@dataclass(frozen=True, slots=True)
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
