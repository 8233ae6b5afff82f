"""Parse and edit `.wild/tasks.md`: checkbox tasks with priority, id, dependencies, subtasks.

The format is seed 001's, read tolerantly:

    - [ ] [P2] task-003: Analyze training results
      - dependsOn: task-002
      - blockedBy: barrier-training-complete
      - [ ] Load checkpoint files

* A top-level task is a line starting at column 0 with a bullet (`-`, `*` or `+`), spaces and a
  checkbox: `[ ]` todo, `[/]` in-progress, `[x]`/`[X]` complete, `[-]` cancelled. Then an
  optional priority tag `[P<n>]` (missing means P2), an optional id and the text.
* The id rule: `ID:` followed by a space (or the line's end) is an id when ID matches
  `[A-Za-z][A-Za-z0-9_.-]*` AND contains a digit or one of `-`, `_`, `.`. So `task-007: x`,
  `T1: x`, `fix_db: x` and `v1.2: x` carry ids, while `- [ ] Refactor: the parser` has no id
  and the text `Refactor: the parser` (a plain word before a colon is prose, not an id).
* Indented lines (until the next non-blank line at column 0) belong to the task above:
  `- dependsOn: a, b` / `- blockedBy: x, y` (key case-insensitive; `depends-on`, `blocked-by`
  too; values split on commas or spaces; repeated lines accumulate), indented checkbox lines
  are subtasks (flat, in file order), anything else is the task's free note, kept as it is.
* Lines inside HTML comments and fenced code blocks are never tasks (the rule of
  `wild.parsers.masking`, the same for every file).
* Problems, never exceptions: a task-looking line with a bad checkbox (`- [?] x`) or a bad
  priority (`[Px]`) is reported and is not a task (its relations and subtasks go with it,
  unreported); a duplicate id is reported on its second task (both stay in `tasks`; `find`
  returns the first); a dependsOn/blockedBy line or an indented checkbox outside any task is
  reported.

Edits are pure `str -> str` functions keyed by task id; they change only the characters they
must (a checkbox, an inserted id) and keep every line's ending, so `store.update_text` can
re-apply them when the file changed under us.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

from wild.parsers import masking
from wild.parsers.lines import Problem, Span, append_lines, body, replace_body, split_lines

TaskStatus = Literal["todo", "in-progress", "complete", "cancelled"]

DEFAULT_PRIORITY = 2
# The most urgent priority a task wild adds can get (`wild --add-task` documents "1 is the
# highest"); a human may still write [P0] by hand, and it is read as written.
HIGHEST_PRIORITY = 1

_STATUS_OF_BOX: dict[str, TaskStatus] = {
    " ": "todo",
    "/": "in-progress",
    "x": "complete",
    "X": "complete",
    "-": "cancelled",
}
_BOX_OF_STATUS: dict[str, str] = {
    "todo": " ",
    "in-progress": "/",
    "complete": "x",
    "cancelled": "-",
}

# An id starts with a letter and holds a digit or one of -_. : the first non-letter must be
# one of those, which is what tells `task-7:` (an id) from `Refactor:` (prose).
_ID = r"[A-Za-z]+[0-9_.-][A-Za-z0-9_.-]*"
_ID_ONLY = re.compile(_ID)


def is_task_id(text: str) -> bool:
    """Whether `text` reads as a task id in tasks.md (`task-7`, `data.prep`; not `prep`)."""
    return _ID_ONLY.fullmatch(text) is not None


# `task-001 : Train`: an id typed with a space before its colon. Read as text, the task would
# get a fresh id and the human's one would be lost in the text, so it is reported instead.
_SPACED_ID = re.compile(rf"(?P<id>{_ID})[ \t]+:(?=[ \t]|\r?$)")
_KEY = r"(?i:depends[-_]?on|blocked[-_]?by)"

# One match per line (ending included) classifies it by the name of its last group:
# box/prio/id (a checkbox line), key or bare_key (a relation).
# Nothing matches the rest of the line: slicing from `match.end()` is cheaper than `(.*)`.
_LINE = re.compile(
    rf"""
    [ \t]*
    (?:
        [-*+][ \t]+
        (?:
            \[(?P<box>[^\]\r\n]{{0,2}})\](?!\()      # `- [a](url)` is a link, not a task
            [ \t]*
            (?:\[(?P<prio>[Pp](?:[0-9]+|[^\]\s]{{0,3}}))\][ \t]*|)   # (?:x|) is faster than (?:x)?
            (?:(?P<id>{_ID}):(?=[ \t]|\r?$)[ \t]*|)
          | (?P<key>{_KEY})[ \t]*:
        )
      | (?P<bare_key>{_KEY})[ \t]*:
    )
    """,
    re.VERBOSE,
)
_CHECKBOX_GROUPS = frozenset(("box", "prio", "id"))
_RELATION_GROUPS = frozenset(("key", "bare_key"))
# Relation values: `a, b`, `a,b` and `a b` all name two ids (ids hold neither commas nor spaces).
_VALUE = re.compile(r"[^,\s]+")
_TASK_NUMBER = re.compile(r"task-([0-9]+)")
_NEWLINES = re.compile(r"\s*[\r\n]+\s*")


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


@dataclass(frozen=True, slots=True)
class TaskList:
    """The whole file: its lines (lossless), its tasks in file order, what was not understood."""

    lines: tuple[str, ...]
    tasks: tuple[Task, ...]
    problems: tuple[Problem, ...]


class _Scanned(NamedTuple):
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
        broken = False  # under a task-looking line wild rejected: its children are not reported
        hidden = iter(blocks)  # the next comment or fence opens at `opens`, ends before `ends`
        block = next(hidden, None)
        opens, ends = (len(lines), 0) if block is None else (block.start, block.end)
        match_line = _LINE.match
        find_values = _VALUE.findall
        status_of = _STATUS_OF_BOX.get
        first_line_of = self.first_line_of.setdefault
        # Lines keep their endings; every rule below treats "\r\n" as trailing whitespace.
        for index, line in enumerate(lines):
            if index >= opens:
                if index == opens and line[0] not in " \t\r\n":
                    # Opening at column 0, it ends the task above like any such line.
                    if start >= 0:
                        span = (start, last + 1)
                        tasks.append(_task(head, depends_on, blocked_by, subtasks, span))
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
                    tasks.append(_task(head, depends_on, blocked_by, subtasks, (start, last + 1)))
                    start = -1
                broken = False
            match = match_line(line)
            if match is None:
                if not at_column_0 and not line.isspace():
                    last = index  # a free note under the task, kept as it is
                continue
            kind = match.lastgroup
            if kind in _CHECKBOX_GROUPS:
                box, prio, task_id = match.group("box", "prio", "id")
                status = status_of(box)
                if status is None:
                    self._report_checkbox(index, box)
                    broken = broken or at_column_0
                elif at_column_0:
                    priority = DEFAULT_PRIORITY if prio is None else self._priority(index, prio)
                    if priority is None:
                        broken = True
                        continue
                    if task_id is not None and first_line_of(task_id, index) != index:
                        self._report_duplicate(index, task_id)
                    elif task_id is None and (spaced := _SPACED_ID.match(line, match.end())):
                        self._report_spaced_id(index, spaced.group("id"))
                        broken = True
                        continue
                    head = (task_id, line[match.end() :].strip(), priority, status)
                    start = index
                    depends_on = blocked_by = subtasks = None
                elif start >= 0:
                    subtask = Subtask(line[match.end("box") + 1 :].strip(), status, index + 1)
                    if subtasks is None:
                        subtasks = [subtask]
                    else:
                        subtasks.append(subtask)
                elif not broken:
                    self._report_orphan(index)
            elif kind in _RELATION_GROUPS:
                key = match.group(kind)
                if start >= 0:
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
            tasks.append(_task(head, depends_on, blocked_by, subtasks, (start, last + 1)))
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
        number = _priority_number(prio)
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


def _priority_number(prio: str) -> int | None:
    """The n of a `Pn` tag, or None when it is not an ASCII number (`Px`, `P`, `P١`)."""
    digits = prio[1:]
    return int(digits) if digits.isdigit() and digits.isascii() else None


def _task(
    head: tuple[str | None, str, int, TaskStatus],
    depends_on: list[str] | None,
    blocked_by: list[str] | None,
    subtasks: list[Subtask] | None,
    span: tuple[int, int],
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
    )


def _split_values(values: str) -> list[str]:
    return _VALUE.findall(values)


def _scan(text: str, file: str) -> _Scanned:
    lines = split_lines(text)
    parser = _Parser(file)
    blocks = masking.scan(text)
    tasks = parser.run(lines, blocks)
    open_block = masking.left_open(blocks)
    unclosed = None if open_block is None else open_block.closer
    return _Scanned(TaskList(tuple(lines), tasks, tuple(parser.problems)), unclosed)


def parse(text: str, file: str = "tasks.md") -> TaskList:
    """Read tasks.md; never raises, whatever the text. Problems name `file` and the line."""
    return _scan(text, file).doc


def reparse(previous: TaskList, text: str, file: str = "tasks.md") -> TaskList:
    """`parse(text, file)`, where `previous` is the parse of the file's last text.

    When `text` differs from it only in the checkboxes of task lines (the loop's own edits,
    a human ticking a task), the result is `previous` with those statuses changed and no
    full parse: one valid box for another changes nothing else a parse sees. Anything else
    gets a full parse. The loop re-reads tasks.md after each edit it makes, often at 10,000
    tasks, where a full parse costs more than its whole budget for one iteration.
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
        changed[at] = replace(tasks[at], status=status)
    if changed:
        tasks = tuple(changed.get(at, task) for at, task in enumerate(tasks))
    return TaskList(tuple(lines), tasks, previous.problems)


def _new_status(before: str, after: str) -> TaskStatus | None:
    """The status a task line now has, when only its valid checkbox changed to another one."""
    old, new = _LINE.match(before), _LINE.match(after)
    if old is None or new is None or old.lastgroup not in _CHECKBOX_GROUPS:
        return None
    at = old.start("box")
    if new.lastgroup not in _CHECKBOX_GROUPS or new.start("box") != at:
        return None
    if before[:at] != after[:at] or before[at + 1 :] != after[at + 1 :]:
        return None
    if old.group("box") not in _STATUS_OF_BOX:
        return None
    return _STATUS_OF_BOX.get(new.group("box"))


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


def _place_of_line(tasks: tuple[Task, ...], index: int) -> int | None:
    """Where in `tasks` (which are in line order) the task on line `index` is, or None."""
    at = bisect.bisect_left(tasks, index, key=lambda task: task.span.start)
    return at if at < len(tasks) and tasks[at].span.start == index else None


def _highest_task_number(doc: TaskList) -> int:
    # Ids named by dependsOn count too, so a new task never silently satisfies a dependency
    # on a task that was deleted or not written yet.
    names: list[str | None] = []
    for task in doc.tasks:
        names.append(task.id)
        names.extend(task.depends_on)
    numbers = [
        int(match.group(1))
        for name in names
        if name is not None and (match := _TASK_NUMBER.fullmatch(name))
    ]
    return max(numbers, default=0)


def _task_id(number: int) -> str:
    return f"task-{number:03d}"


def next_task_id(doc: TaskList) -> str:
    """`task-NNN`, one above the highest task-NNN id (or dependsOn reference) in the file."""
    return _task_id(_highest_task_number(doc) + 1)


def _with_bodies(lines: tuple[str, ...], changes: dict[int, str]) -> str:
    out = list(lines)
    for index, new_body in changes.items():
        out[index] = replace_body(out[index], new_body)
    return "".join(out)


def _box_for(status: str) -> str:
    try:
        return _BOX_OF_STATUS[status]
    except KeyError:
        raise ValueError(
            f"unknown task status {status!r}: use todo, in-progress, complete or cancelled"
        ) from None


def _line_around(text: str, offset: int) -> tuple[int, str]:
    """The start offset and the text (ending included) of the line holding `offset`."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, text[start : len(text) if end < 0 else end + 1]


def _is_task_line(line: str, match: re.Match[str], task_id: str) -> bool:
    """Whether `parse` takes this line for a task with this id (the rules of `_Parser.run`)."""
    prio = match.group("prio")
    return (
        line[0] not in " \t\r\n"
        and match.group("id") == task_id
        and match.group("box") in _STATUS_OF_BOX
        and (prio is None or _priority_number(prio) is not None)
    )


def _task_line(text: str, task_id: str) -> tuple[int, str, re.Match[str]] | None:
    """The offset, text and `_LINE` match of the line `find(parse(text), task_id)` starts at.

    A checkbox update must cost far less than a parse of a 10,000-task file (SPEC §10), so
    this looks only at lines holding `task_id:` and at comment and fence markers.
    """
    if _ID_ONLY.fullmatch(task_id) is None:
        return None
    needle = task_id + ":"
    at = text.find(needle)
    while at >= 0:
        start, line = _line_around(text, at)
        match = _LINE.match(line)
        if match is not None and _is_task_line(line, match, task_id):
            # Only a block opened above the line can hide it, and only the last one.
            blocks = masking.scan(text, until=start)
            if not blocks or blocks[-1].end_at <= start:
                return start, line, match
        at = text.find(needle, start + len(line))
    return None


def set_status(text: str, task_id: str, status: TaskStatus) -> str:
    """Rewrite only the checkbox character of the task; unknown id leaves the text unchanged."""
    box = _box_for(status)
    found = _task_line(text, task_id)
    if found is None:
        return text
    start, line, match = found
    if _STATUS_OF_BOX[match.group("box")] == status:
        return text  # `[X]` stays `[X]`: nothing to change
    at = match.start("box")
    new_line = line[:at] + box + line[at + 1 :]
    return text[:start] + new_line + text[start + len(line) :]


def _insert_id(text: str, at: int, task_id: str) -> str:
    label = f"{task_id}: " if text[at:].strip() else f"{task_id}:"
    if at > 0 and text[at - 1] not in " \t":
        label = " " + label  # `- [ ]Build` becomes `- [ ] task-001: Build`
    return text[:at] + label + text[at:]


def assign_missing_ids(text: str) -> str:
    """Give each top-level task without an id the next free `task-NNN`, written into its line."""
    doc = parse(text)
    number = _highest_task_number(doc)
    changes: dict[int, str] = {}
    for task in doc.tasks:
        if task.id is not None:
            continue
        line = body(doc.lines[task.span.start])
        match = _LINE.match(line)
        if match is None or match.group("box") is None:
            continue  # cannot happen for a parsed task line
        number += 1
        changes[task.span.start] = _insert_id(line, match.end(), _task_id(number))
    return _with_bodies(doc.lines, changes) if changes else text


def _one_line(description: str) -> str:
    return _NEWLINES.sub(" ", description).strip()


def new_task_priority(requested: object) -> int:
    """The priority a task wild adds gets when `requested`: a whole number raised to at least
    HIGHEST_PRIORITY, and DEFAULT_PRIORITY for anything else (missing, fractional, text).

    Agents ask for priorities in `new_events` and may ask for anything; clamping keeps what
    they ask within what a human can give with `wild --add-task --priority`.
    """
    if isinstance(requested, int) and not isinstance(requested, bool):
        return max(requested, HIGHEST_PRIORITY)
    return DEFAULT_PRIORITY


def add_task(
    text: str,
    description: str,
    *,
    priority: object = DEFAULT_PRIORITY,
    depends_on: Iterable[str] = (),
    blocked_by: Iterable[str] = (),
) -> tuple[str, str]:
    """Append `- [ ] [P<n>] task-NNN: description` (and its relation lines); return (text, id).

    Every task wild adds comes through here: the id is the next free `task-NNN`, and the
    priority is `new_task_priority(priority)`.
    """
    priority = new_task_priority(priority)
    scanned = _scan(text, "tasks.md")
    new_id = next_task_id(scanned.doc)
    # A comment or fence left open would hide the new task: close it first.
    bodies = [] if scanned.unclosed is None else [scanned.unclosed]
    bodies.append(f"- [ ] [P{priority}] {new_id}: {_one_line(description)}".rstrip())
    for key, values in (("dependsOn", depends_on), ("blockedBy", blocked_by)):
        ids = [value for raw in values for value in _split_values(raw)]
        if ids:
            bodies.append(f"  - {key}: {', '.join(ids)}")
    return append_lines(text, bodies), new_id
