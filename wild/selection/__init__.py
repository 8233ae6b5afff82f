"""Work selection: a pure, deterministic ordering of everything the loop could do next (SPEC §2).

The package: `items` (the snapshot, queue items and the selection), `inbox` (human inputs and
alerts), `plan` (which tasks can run), `blocked` (why a task waits), `cycles` (dependency
cycles) and `queue` (the order and `select_work`). Callers use the names re-exported here.
"""

from wild.selection.items import (
    HUMAN_ONLY_WAIT,
    HUMAN_WAIT,
    OPEN,
    Selection,
    SelectionKind,
    WorkItem,
    WorkKind,
    WorkSnapshot,
    task_key,
)
from wild.selection.queue import select_work

__all__ = [
    "HUMAN_ONLY_WAIT",
    "HUMAN_WAIT",
    "OPEN",
    "Selection",
    "SelectionKind",
    "WorkItem",
    "WorkKind",
    "WorkSnapshot",
    "select_work",
    "task_key",
]
