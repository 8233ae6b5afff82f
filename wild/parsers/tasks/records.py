"""The records a parse of tasks.md yields, and the lookups callers make on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
