"""The line grammar of tasks.md: one regex classifies a line, tables map boxes to statuses.

The parser, the fast re-parse and the surgical edits all read lines through these, so they
agree on what a task line is.
"""

from __future__ import annotations

import functools
import re

from wild.parsers.ids import TASK_ID, TASK_ID_PATTERN
from wild.parsers.numbers import bounded_int
from wild.parsers.tasks.records import TaskStatus

STATUS_OF_BOX: dict[str, TaskStatus] = {
    " ": "todo",
    "/": "in-progress",
    "x": "complete",
    "X": "complete",
    "-": "cancelled",
}
BOX_OF_STATUS: dict[str, str] = {
    "todo": " ",
    "in-progress": "/",
    "complete": "x",
    "cancelled": "-",
}

# A task id (wild.parsers.ids): its first non-letter, a digit or one of -_. , is what tells
# `task-7:` (an id) from `Refactor:` (prose).
_ID = TASK_ID_PATTERN
ID_ONLY = TASK_ID


@functools.cache  # compiled at its first use: a well-formed tasks.md never asks (issue 22 item 8)
def spaced_id() -> re.Pattern[str]:
    """`task-001 : Train`: an id typed with a space before its colon. Read as text, the task
    would get a fresh id and the human's one would be lost in the text, so it is reported."""
    return re.compile(rf"(?P<id>{_ID})[ \t]+:(?=[ \t]|\r?$)")


# `check:` holds a shell command that verifies the task (not ids): read whole by the parser.
_KEY = r"(?i:depends[-_]?on|blocked[-_]?by|check)"

# One match per line (ending included) classifies it by the name of its last group:
# box/prio/id (a checkbox line), key or bare_key (a relation). The parser reads all five at
# once with `match.groups()`, in this order: box, prio, id, key, bare_key.
# Nothing matches the rest of the line: slicing from `match.end()` is cheaper than `(.*)`.
LINE = re.compile(
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
# A whole task at once, for the common shape: a task line at column 0 with a valid box, an
# ASCII-number priority (or none) and an id, then at most one dependsOn and one blockedBy line,
# each line ended by "\n". It reads what `LINE` reads on those lines (the parser's slow path
# takes every other shape, and continues a task this one started). Groups, in order: box,
# priority, id, the rest of the task line, the dependsOn values, the blockedBy values.
WHOLE_TASK = re.compile(
    rf"""
    [-*+][ \t]+\[([ /xX-])\](?!\()[ \t]*
    (?:\[([Pp][0-9]+)\][ \t]*|)
    ({_ID}):(?=[ \t]|\r?\n)
    ([^\n]*)\n
    (?:[ \t]+[-*+][ \t]+(?i:depends[-_]?on)[ \t]*:([^\n]*)\n|)
    (?:[ \t]+[-*+][ \t]+(?i:blocked[-_]?by)[ \t]*:([^\n]*)\n|)
    """,
    re.VERBOSE,
)
CHECKBOX_GROUPS = frozenset(("box", "prio", "id"))
RELATION_GROUPS = frozenset(("key", "bare_key"))


@functools.cache  # compiled at its first use: adding a task, never on the way to an agent
def relation_value() -> re.Pattern[str]:
    """Relation values: `a, b`, `a,b` and `a b` all name two ids (ids hold neither commas nor
    spaces)."""
    return re.compile(r"[^,\s]+")


def priority_number(prio: str) -> int | None:
    """The n of a `Pn` tag, or None when it is not an ASCII number (`Px`, `P`, `P١`)."""
    digits = prio[1:]
    return bounded_int(digits) if digits[:1].isdigit() else None


def is_task_line(line: str, match: re.Match[str], task_id: str) -> bool:
    """Whether `parse` takes this line for a task with this id (the rules of `parser._Parser`)."""
    prio = match.group("prio")
    return (
        line[0] not in " \t\r\n"
        and match.group("id") == task_id
        and match.group("box") in STATUS_OF_BOX
        and (prio is None or priority_number(prio) is not None)
    )
