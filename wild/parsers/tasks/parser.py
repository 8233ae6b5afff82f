"""The parser of tasks.md: one forward pass over the lines, problems reported, never raised.

The format it reads is described in `wild.parsers.tasks`.
"""

from __future__ import annotations

from typing import NamedTuple

from wild.parsers import masking
from wild.parsers.lines import Problem, Span, split_lines
from wild.parsers.tasks.grammar import (
    CHECKBOX_GROUPS,
    LINE,
    RELATION_GROUPS,
    SPACED_ID,
    STATUS_OF_BOX,
    VALUE,
    priority_number,
)
from wild.parsers.tasks.records import DEFAULT_PRIORITY, Subtask, Task, TaskList, TaskStatus


class Scanned(NamedTuple):
    """A parse, and what `add_task` needs to know of the file's end."""

    doc: TaskList
    unclosed: str | None  # the line that would close a comment or fence left open at the end


class _Parser:
    """One forward pass over the lines, one regex match per line outside comments and fences
    (found beforehand by `masking.scan`).

    The loop keeps the open task in local variables and calls out only for rare cases: a
    10,000-task file must parse in well under 100 ms, and per-line calls cost that much.
    """

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.first_line_of: dict[str, int] = {}

    def run(  # noqa: PLR0915
        self, lines: list[str], blocks: tuple[masking.Block, ...]
    ) -> tuple[Task, ...]:
        """The tasks of `lines`, whose comments and fences are `blocks`.

        (PLR0915: splitting this loop into per-line calls is what made parsing too slow.)
        """
        tasks: list[Task] = []
        # The open task: its line index (-1 when none), head fields, children (None until the
        # first one: most tasks have few), and the last line that belongs to it.
        start = -1
        last = -1
        head: tuple[str | None, str, int, TaskStatus] = (None, "", DEFAULT_PRIORITY, "todo")
        depends_on: list[str] | None = None
        blocked_by: list[str] | None = None
        subtasks: list[Subtask] | None = None
        check: str | None = None
        broken = False  # under a task-looking line wild rejected: its children are not reported
        hidden = iter(blocks)  # the next comment or fence opens at `opens`, ends before `ends`
        block = next(hidden, None)
        opens, ends = (len(lines), 0) if block is None else (block.start, block.end)
        match_line = LINE.match
        find_values = VALUE.findall
        status_of = STATUS_OF_BOX.get
        first_line_of = self.first_line_of.setdefault
        # `[P1]`, `[P2]`, ...: a file holds a handful of tags, read once each, not per task.
        priorities: dict[str, int] = {}

        def close(end: int) -> None:
            """The open task ends before line `end`."""
            tasks.append(_task(head, depends_on, blocked_by, subtasks, (start, end), check=check))

        # Lines keep their endings; every rule below treats "\r\n" as trailing whitespace.
        for index, line in enumerate(lines):
            if index >= opens:
                if index == opens and line[0] not in " \t\r\n":
                    # Opening at column 0, it ends the task above like any such line.
                    if start >= 0:
                        close(last + 1)
                        start = -1
                    broken = False
                last = index  # inside a task, the block is part of its note
                if index + 1 >= ends:
                    block = next(hidden, None)
                    opens, ends = (len(lines), 0) if block is None else (block.start, block.end)
                continue
            at_column_0 = line[0] not in " \t\r\n"
            if at_column_0:  # a non-blank line at column 0 ends the task above
                if start >= 0:
                    close(last + 1)
                    start = -1
                broken = False
            match = match_line(line)
            if match is None:
                if not at_column_0 and not line.isspace():
                    last = index  # a free note under the task, kept as it is
                continue
            kind = match.lastgroup
            if kind in CHECKBOX_GROUPS:
                box, prio, task_id = match.group("box", "prio", "id")
                status = status_of(box)
                if status is None:
                    self._report_checkbox(index, box)
                    broken = broken or at_column_0
                elif at_column_0:
                    priority = DEFAULT_PRIORITY
                    if prio is not None:
                        known = priorities.get(prio)
                        if known is None:
                            known = self._priority(index, prio)
                            if known is None:
                                broken = True
                                continue
                            priorities[prio] = known
                        priority = known
                    if task_id is not None and first_line_of(task_id, index) != index:
                        self._report_duplicate(index, task_id)
                    elif task_id is None and (spaced := SPACED_ID.match(line, match.end())):
                        self._report_spaced_id(index, spaced.group("id"))
                        broken = True
                        continue
                    head = (task_id, line[match.end() :].strip(), priority, status)
                    start = index
                    depends_on = blocked_by = subtasks = None
                    check = None
                elif start >= 0:
                    subtask = Subtask(line[match.end("box") + 1 :].strip(), status, index + 1)
                    if subtasks is None:
                        subtasks = [subtask]
                    else:
                        subtasks.append(subtask)
                elif not broken:
                    self._report_orphan(index)
            elif kind in RELATION_GROUPS:
                key = match.group(kind)
                if start >= 0:
                    if key[0] in "cC":
                        check = check or line[match.end() :].strip() or None  # the first one
                        last = index
                        continue
                    values = find_values(line, match.end())
                    if key[0] in "dD":
                        if depends_on is None:
                            depends_on = values
                        else:
                            depends_on += values
                    elif blocked_by is None:
                        blocked_by = values
                    else:
                        blocked_by += values
                elif not broken:
                    self._report_outside(index, key)
            last = index
        if start >= 0:
            close(last + 1)
        return tuple(tasks)

    def _report(self, index: int, message: str) -> None:
        self.problems.append(Problem(self.file, index + 1, message))

    def _report_checkbox(self, index: int, box: str) -> None:
        self._report(
            index,
            f'bad checkbox "[{box}]": use [ ] todo, [/] in-progress, [x] complete or [-] cancelled',
        )

    def _report_outside(self, index: int, key: str) -> None:
        self._report(index, f"{key} line outside any task: indent it under the task it belongs to")

    def _report_orphan(self, index: int) -> None:
        self._report(
            index,
            "subtask outside any task: put it under a task line, "
            "or start it at column 0 to make it a task",
        )

    def _priority(self, index: int, prio: str) -> int | None:
        """The number in a `[P<n>]` tag, or None (reported) when it is not a number."""
        number = priority_number(prio)
        if number is not None:
            return number
        self._report(
            index,
            f'bad priority "[{prio}]": write [P<number>] such as [P1], or leave it out for P2',
        )
        return None

    def _report_spaced_id(self, index: int, task_id: str) -> None:
        self._report(
            index,
            f'task id "{task_id}" has a space before its ":"; write "{task_id}:" '
            "(until then the line is not read as a task, and is left as it is)",
        )

    def _report_duplicate(self, index: int, task_id: str) -> None:
        self._report(
            index,
            f'duplicate task id "{task_id}" (first used on line {self.first_line_of[task_id] + 1}):'
            " give this task another id",
        )


def _task(
    head: tuple[str | None, str, int, TaskStatus],
    depends_on: list[str] | None,
    blocked_by: list[str] | None,
    subtasks: list[Subtask] | None,
    span: tuple[int, int],
    *,
    check: str | None,
) -> Task:
    task_id, text, priority, status = head
    return Task(
        task_id,
        text,
        priority,
        status,
        () if depends_on is None else tuple(depends_on),
        () if blocked_by is None else tuple(blocked_by),
        () if subtasks is None else tuple(subtasks),
        Span(*span),
        check,
    )


def scan(text: str, file: str) -> Scanned:
    """`parse`, plus the closer of a comment or fence the text leaves open (for `add_task`)."""
    lines = split_lines(text)
    parser = _Parser(file)
    blocks = masking.scan(text)
    tasks = parser.run(lines, blocks)
    open_block = masking.left_open(blocks)
    unclosed = None if open_block is None else open_block.closer
    return Scanned(TaskList(tuple(lines), tasks, tuple(parser.problems)), unclosed)


def parse(text: str, file: str = "tasks.md") -> TaskList:
    """Read tasks.md; never raises, whatever the text. Problems name `file` and the line."""
    return scan(text, file).doc
