"""The records of work selection: the snapshot it reads, the queue items and the selection."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Literal, NamedTuple

from wild.record import record

if TYPE_CHECKING:  # records named, not made: a status after an edit of tasks.md may read
    # only tasks.md (wild.commands.status_tasks)
    from wild.parsers.alerts import Alert
    from wild.parsers.barriers import Barrier
    from wild.parsers.human import HumanInput
    from wild.parsers.tasks import Task

WorkKind = Literal["human-input", "alert", "task", "blocked"]
SelectionKind = Literal["human-input", "alert", "task", "blocked", "complete"]

OPEN = frozenset({"todo", "in-progress"})
HUMAN_WAIT = "waiting for the human's answer in human.md"
# An alert of a type only a human can resolve (an approval, the policy, a weakened check).
HUMAN_ONLY_WAIT = "waiting for the human: only a human can resolve this alert"


class WorkItem(NamedTuple):
    """One entry of the ordered queue that `wild --list-work` prints.

    A named tuple rather than a dataclass: every selection makes one per open task (often
    thousands), and a tuple is made several times faster.
    """

    kind: WorkKind
    id: str
    title: str
    reason: str | None = None  # why a blocked item waits
    barriers: tuple[str, ...] = ()  # barriers a blocked task waits on
    urgent: bool = False
    severity: str | None = None
    priority: int | None = None
    status: str | None = None


@record
class WorkSnapshot:
    """Everything selection looks at, already parsed; no I/O happens past this point."""

    tasks: tuple[Task, ...] = ()
    alerts: tuple[Alert, ...] = ()  # latest state of each alert that is not resolved
    barriers: tuple[Barrier, ...] = ()
    human: tuple[HumanInput, ...] = ()
    # Alert ids whose blocking escalation still waits for the human's answer.
    awaiting_human: frozenset[str] = field(default_factory=frozenset)


@record
class Selection:
    """What to do now, plus the whole queue it was chosen from."""

    kind: SelectionKind
    item: WorkItem | None
    queue: tuple[WorkItem, ...]
    waiting_barriers: tuple[Barrier, ...] = ()
    can_check: bool = False  # some waiting barrier can be checked by wild itself
    problems: tuple[str, ...] = ()


def task_key(task: Task) -> str:
    """A task's id, or where it stands when it has none yet (ids get written before work starts)."""
    return task.id if task.id is not None else f"line-{task.span.start + 1}"
