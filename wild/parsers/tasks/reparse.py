"""Re-reading tasks.md after a checkbox edit without a full parse.

The loop re-reads tasks.md after each edit it makes, often at 10,000 tasks, where a full
parse costs more than its whole budget for one iteration.
"""

from __future__ import annotations

import bisect

from wild.parsers.lines import split_lines
from wild.parsers.tasks.grammar import CHECKBOX_GROUPS, LINE, STATUS_OF_BOX
from wild.parsers.tasks.parser import parse
from wild.parsers.tasks.records import Task, TaskList, TaskStatus


def reparse(previous: TaskList, text: str, file: str = "tasks.md") -> TaskList:
    """`parse(text, file)`, where `previous` is the parse of the file's last text.

    When `text` differs from it only in the checkboxes of task lines (the loop's own edits,
    a human ticking a task), the result is `previous` with those statuses changed and no
    full parse: one valid box for another changes nothing else a parse sees. Anything else
    gets a full parse.
    """
    lines = split_lines(text)
    old = previous.lines
    if len(lines) != len(old) or any(p.file != file for p in previous.problems):
        return parse(text, file)
    tasks = previous.tasks
    changed: dict[int, Task] = {}
    for index, (before, after) in enumerate(zip(old, lines, strict=True)):
        if before == after:
            continue
        at = _place_of_line(tasks, index)
        status = None if at is None else _new_status(before, after)
        if at is None or status is None:
            return parse(text, file)
        changed[at] = tasks[at]._replace(status=status)
    if changed:
        tasks = tuple(changed.get(at, task) for at, task in enumerate(tasks))
    return TaskList(tuple(lines), tasks, previous.problems)


def _new_status(before: str, after: str) -> TaskStatus | None:
    """The status a task line now has, when only its valid checkbox changed to another one."""
    old, new = LINE.match(before), LINE.match(after)
    if old is None or new is None or old.lastgroup not in CHECKBOX_GROUPS:
        return None
    at = old.start("box")
    if new.lastgroup not in CHECKBOX_GROUPS or new.start("box") != at:
        return None
    if before[:at] != after[:at] or before[at + 1 :] != after[at + 1 :]:
        return None
    if old.group("box") not in STATUS_OF_BOX:
        return None
    return STATUS_OF_BOX.get(new.group("box"))


def _place_of_line(tasks: tuple[Task, ...], index: int) -> int | None:
    """Where in `tasks` (which are in line order) the task on line `index` is, or None."""
    at = bisect.bisect_left(tasks, index, key=lambda task: task.span.start)
    return at if at < len(tasks) and tasks[at].span.start == index else None
