"""The parser of tasks.md: one forward pass over the lines, problems reported, never raised.

The format it reads is described in `wild.parsers.tasks`.
"""

from __future__ import annotations

import gc
from collections import deque
from itertools import islice
from typing import NamedTuple

from wild.parsers import masking
from wild.parsers.lines import Problem, split_lines
from wild.parsers.tasks.grammar import (
    LINE,
    STATUS_OF_BOX,
    WHOLE_TASK,
    priority_number,
    spaced_id,
)
from wild.parsers.tasks.records import (
    DEFAULT_PRIORITY,
    Subtask,
    Task,
    TaskList,
    TaskStatus,
    new_task,
)


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

    def __init__(self, file: str, *, whole_tasks: bool = True) -> None:
        self.file = file
        # Whether the common shape of a task (`grammar.WHOLE_TASK`) is read with one match;
        # False reads every line alone (the tests compare the two).
        self.whole_tasks = whole_tasks
        self.problems: list[Problem] = []
        self.first_line_of: dict[str, int] = {}

    def run(  # noqa: PLR0915
        self, source: str, lines: list[str], blocks: tuple[masking.Block, ...]
    ) -> tuple[Task, ...]:
        """The tasks of `lines` (`split_lines(source)`), whose comments and fences are `blocks`.

        (PLR0915: splitting this loop into per-line calls is what made parsing too slow.)
        """
        tasks: list[Task] = []
        # The open task: its line index (-1 when none), head fields, children (subtasks None
        # until the first one: most tasks have none), and the last line that belongs to it.
        # Plain locals, not a closure's cells or a tuple: the loop reads them on every line.
        start = -1
        last = -1
        task_id: str | None = None
        text = ""
        priority = DEFAULT_PRIORITY
        status: TaskStatus = "todo"
        depends_on: tuple[str, ...] = ()
        blocked_by: tuple[str, ...] = ()
        subtasks: list[Subtask] | None = None
        check: str | None = None
        broken = False  # under a task-looking line wild rejected: its children are not reported
        hidden = iter(blocks)  # the next comment or fence opens at `opens`, ends before `ends`
        block = next(hidden, None)
        opens, ends = (len(lines), 0) if block is None else (block.start, block.end)
        match_line = LINE.match
        # A task in its common shape is read with one match over its lines in `source`, and
        # the lines it took are skipped: half the lines of a big file are relation lines.
        whole_tasks = self.whole_tasks
        match_whole = WHOLE_TASK.match
        # Where line `known_at` starts in `source` (counted on as far as a match needs it).
        known_at = known_offset = 0
        status_of_box = STATUS_OF_BOX
        numbered = enumerate(lines)
        status_of = STATUS_OF_BOX.get
        first_line_of = self.first_line_of.setdefault
        make = new_task
        add = tasks.append
        # `[P1]`, `[P2]`, ...: a file holds a handful of tags, read once each, not per task.
        # (No tag: None, the default priority.)
        priorities: dict[str | None, int] = {None: DEFAULT_PRIORITY}

        # Lines keep their endings; every rule below treats "\r\n" as trailing whitespace.
        # The open task is closed (`add(make(...))`) where a line at column 0 ends it, and
        # at the end: written out each time, since a call per task is what this loop avoids.
        for index, line in numbered:
            if index >= opens:
                if index == opens and line[0] not in " \t\r\n":
                    # Opening at column 0, it ends the task above like any such line.
                    if start >= 0:
                        subs = () if subtasks is None else tuple(subtasks)
                        add(
                            make(
                                task_id,
                                text,
                                priority,
                                status,
                                depends_on,
                                blocked_by,
                                subs,
                                start,
                                last + 1,
                                check,
                            )
                        )
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
                    subs = () if subtasks is None else tuple(subtasks)
                    add(
                        make(
                            task_id,
                            text,
                            priority,
                            status,
                            depends_on,
                            blocked_by,
                            subs,
                            start,
                            last + 1,
                            check,
                        )
                    )
                    start = -1
                broken = False
                if whole_tasks and line[0] in "-*+":
                    # Where the line starts in `source`: counted on from the last place known.
                    known_offset += sum(map(len, lines[known_at:index]))
                    known_at = index
                    whole = match_whole(source, known_offset)
                    # Tasks in their common shape, one after another: each read with one
                    # match where the last one ended, none of their lines seen by the loop.
                    at = index  # the line the match starts at
                    subtasks = check = None
                    while whole is not None:
                        box, prio, line_id, rest, depends, blocks_on = whole.groups()
                        line_priority = priorities.get(prio)
                        # A tag not read yet goes the line-by-line way, which reads (or
                        # reports) it; the task before it is added already.
                        if line_priority is None:
                            start = -1
                            break
                        if first_line_of(line_id, at) != at:
                            self._report_duplicate(at, line_id)
                        task_id = line_id
                        text = rest.strip()
                        priority = line_priority
                        status = status_of_box[box]
                        start = at
                        depends_on = blocked_by = ()
                        if depends is not None:
                            depends_on = tuple(depends.replace(",", " ").split())
                            at += 1
                        if blocks_on is not None:
                            blocked_by = tuple(blocks_on.replace(",", " ").split())
                            at += 1
                        last = at
                        at += 1
                        end = whole.end()
                        if at >= opens or (whole := match_whole(source, end)) is None:
                            known_at = at
                            known_offset = end
                            break
                        # The next line starts a task at column 0: it ends this one.
                        add(
                            make(
                                task_id,
                                text,
                                priority,
                                status,
                                depends_on,
                                blocked_by,
                                (),
                                start,
                                at,
                                None,
                            )
                        )
                    if at > index:  # the loop goes on at `at`: the lines before it are read
                        deque(islice(numbered, at - index - 1), 0)
                        continue
            match = match_line(line)
            if match is None:
                if not at_column_0 and not line.isspace():
                    last = index  # a free note under the task, kept as it is
                continue
            # One call for every group (a checkbox line has `box`, a relation `key` or
            # `bare_key`): naming groups one by one costs more than the match itself.
            box, prio, line_id, key, bare_key = match.groups()
            if box is not None:
                line_status = status_of(box)
                if line_status is None:
                    self._report_checkbox(index, box)
                    broken = broken or at_column_0
                elif at_column_0:
                    line_priority = DEFAULT_PRIORITY
                    if prio is not None:
                        known = priorities.get(prio)
                        if known is None:
                            known = self._priority(index, prio)
                            if known is None:
                                broken = True
                                continue
                            priorities[prio] = known
                        line_priority = known
                    if line_id is not None and first_line_of(line_id, index) != index:
                        self._report_duplicate(index, line_id)
                    elif line_id is None and (spaced := spaced_id().match(line, match.end())):
                        self._report_spaced_id(index, spaced.group("id"))
                        broken = True
                        continue
                    task_id = line_id
                    text = line[match.end() :].strip()
                    priority = line_priority
                    status = line_status
                    start = index
                    depends_on = blocked_by = ()
                    subtasks = check = None
                elif start >= 0:
                    subtask = Subtask(line[match.end("box") + 1 :].strip(), line_status, index + 1)
                    if subtasks is None:
                        subtasks = [subtask]
                    else:
                        subtasks.append(subtask)
                elif not broken:
                    self._report_orphan(index)
            else:
                key = key or bare_key
                if start >= 0:
                    if key[0] in "cC":
                        check = check or line[match.end() :].strip() or None  # the first one
                        last = index
                        continue
                    # `relation_value().findall`, as str methods: commas and str.split's
                    # whitespace (the `\s` of `relation_value`) separate the ids.
                    values = tuple(line[match.end() :].replace(",", " ").split())
                    if key[0] in "dD":
                        depends_on = depends_on + values if depends_on else values
                    else:
                        blocked_by = blocked_by + values if blocked_by else values
                elif not broken:
                    self._report_outside(index, key)
            last = index
        if start >= 0:
            subs = () if subtasks is None else tuple(subtasks)
            add(
                make(
                    task_id,
                    text,
                    priority,
                    status,
                    depends_on,
                    blocked_by,
                    subs,
                    start,
                    last + 1,
                    check,
                )
            )
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


def scan(text: str, file: str) -> Scanned:
    """`parse`, plus the closer of a comment or fence the text leaves open (for `add_task`)."""
    lines = split_lines(text)
    parser = _Parser(file)
    blocks = masking.scan(text)
    # The collector is held off while the tasks are made: every record of a parse is kept
    # and none is in a reference cycle, so a collection in the middle frees nothing and only
    # walks them (a 10,000-task file set off ~37 young and ~3 middle collections, and one
    # full one in every few parses: ~3 ms of a parse + select). Resumed after, it sees them
    # once. The switch is the process's: other threads' collections wait for the parse (tens
    # of ms at most); whoever found it on turns it back on, whoever found it off leaves it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        tasks = parser.run(text, lines, blocks)
    finally:
        if collecting:
            gc.enable()
    open_block = masking.left_open(blocks)
    unclosed = None if open_block is None else open_block.closer
    return Scanned(TaskList(tuple(lines), tasks, tuple(parser.problems)), unclosed)


def parse(text: str, file: str = "tasks.md") -> TaskList:
    """Read tasks.md; never raises, whatever the text. Problems name `file` and the line."""
    return scan(text, file).doc
