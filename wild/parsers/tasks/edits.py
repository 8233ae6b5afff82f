"""Surgical edits of tasks.md: a checkbox, missing ids, a new task; text in, text out.

Each is a pure `str -> str` function keyed by task id; it changes only the characters it
must (a checkbox, an inserted id) and keeps every line's ending, so `store.update_text` can
re-apply it when the file changed under us.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from wild.parsers import masking
from wild.parsers.lines import append_lines, body, replace_body
from wild.parsers.numbers import bounded_int
from wild.parsers.tasks.grammar import (
    BOX_OF_STATUS,
    ID_ONLY,
    LINE,
    STATUS_OF_BOX,
    is_task_line,
    relation_value,
)
from wild.parsers.tasks.parser import parse, scan
from wild.parsers.tasks.records import DEFAULT_PRIORITY, HIGHEST_PRIORITY, TaskList, TaskStatus


@functools.cache
def _task_number() -> re.Pattern[str]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile(r"task-([0-9]+)")


@functools.cache
def _newlines() -> re.Pattern[str]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile(r"\s*[\r\n]+\s*")


def _highest_task_number(doc: TaskList) -> int:
    # Ids named by a task's dependsOn count too, so a new task never silently satisfies a
    # dependency on a task that was deleted. References from tasks still without an id do
    # not: they were written with the new tasks, in a plan that counts on wild numbering it
    # in order (the planning prompt's `- [ ] [P2] Train` / `- dependsOn: task-001`).
    names: list[str | None] = []
    for task in doc.tasks:
        names.append(task.id)
        if task.id is not None:
            names.extend(task.depends_on)
    numbers = [
        bounded_int(match.group(1))
        for name in names
        if name is not None and (match := _task_number().fullmatch(name))
    ]
    # A task number too large to read (task-999…9) cannot collide with the next one either.
    return max((n for n in numbers if n is not None), default=0)


def _task_id(number: int) -> str:
    return f"task-{number:03d}"


def next_task_id(doc: TaskList) -> str:
    """`task-NNN`, one above the highest task-NNN id (or a numbered task's dependsOn
    reference) in the file."""
    return _task_id(_highest_task_number(doc) + 1)


def _with_bodies(lines: tuple[str, ...], changes: dict[int, str]) -> str:
    out = list(lines)
    for index, new_body in changes.items():
        out[index] = replace_body(out[index], new_body)
    return "".join(out)


def _box_for(status: str) -> str:
    try:
        return BOX_OF_STATUS[status]
    except KeyError:
        raise ValueError(
            f"unknown task status {status!r}: use todo, in-progress, complete or cancelled"
        ) from None


def _line_around(text: str, offset: int) -> tuple[int, str]:
    """The start offset and the text (ending included) of the line holding `offset`."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, text[start : len(text) if end < 0 else end + 1]


def _task_line(text: str, task_id: str) -> tuple[int, str, re.Match[str]] | None:
    """The offset, text and `LINE` match of the line `find(parse(text), task_id)` starts at.

    A checkbox update must cost far less than a parse of a 10,000-task file (SPEC §10), so
    this looks only at lines holding `task_id:` and at comment and fence markers.
    """
    if ID_ONLY.fullmatch(task_id) is None:
        return None
    needle = task_id + ":"
    at = text.find(needle)
    while at >= 0:
        start, line = _line_around(text, at)
        match = LINE.match(line)
        if match is not None and is_task_line(line, match, task_id):
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
    if STATUS_OF_BOX[match.group("box")] == status:
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
        match = LINE.match(line)
        if match is None or match.group("box") is None:
            continue  # cannot happen for a parsed task line
        number += 1
        changes[task.span.start] = _insert_id(line, match.end(), _task_id(number))
    return _with_bodies(doc.lines, changes) if changes else text


def _one_line(description: str) -> str:
    return _newlines().sub(" ", description).strip()


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
    scanned = scan(text, "tasks.md")
    new_id = next_task_id(scanned.doc)
    # A comment or fence left open would hide the new task: close it first.
    bodies = [] if scanned.unclosed is None else [scanned.unclosed]
    bodies.append(f"- [ ] [P{priority}] {new_id}: {_one_line(description)}".rstrip())
    for key, values in (("dependsOn", depends_on), ("blockedBy", blocked_by)):
        ids = [value for raw in values for value in relation_value().findall(raw)]
        if ids:
            bodies.append(f"  - {key}: {', '.join(ids)}")
    return append_lines(text, bodies), new_id
