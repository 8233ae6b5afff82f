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

The package: `records` (Task, TaskList and lookups), `grammar` (the line regex and the
checkbox tables), `parser` (parse), `reparse` (after a checkbox edit) and `edits` (set_status,
assign_missing_ids, add_task). Callers use the names re-exported here.
"""

from wild.parsers.ids import is_task_id
from wild.parsers.tasks.edits import (
    add_task,
    assign_missing_ids,
    new_task_priority,
    next_task_id,
    set_status,
)
from wild.parsers.tasks.parser import parse
from wild.parsers.tasks.records import (
    DEFAULT_PRIORITY,
    HIGHEST_PRIORITY,
    Subtask,
    Task,
    TaskList,
    TaskStatus,
    find,
    missing_ids,
    render,
)
from wild.parsers.tasks.reparse import reparse

__all__ = [
    "DEFAULT_PRIORITY",
    "HIGHEST_PRIORITY",
    "Subtask",
    "Task",
    "TaskList",
    "TaskStatus",
    "add_task",
    "assign_missing_ids",
    "find",
    "is_task_id",
    "missing_ids",
    "new_task_priority",
    "next_task_id",
    "parse",
    "render",
    "reparse",
    "set_status",
]
