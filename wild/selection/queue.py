"""The whole queue in order, and what to do now (SPEC §2)."""

from __future__ import annotations

from typing import NamedTuple

from wild.selection.inbox import alert_items, human_items
from wild.selection.items import Selection, WorkItem, WorkSnapshot
from wild.selection.plan import TaskPlan, plan_tasks


class _Parts(NamedTuple):
    """The queue in its parts, before they are put in order."""

    human: list[WorkItem]
    held_human: list[WorkItem]
    alerts: list[WorkItem]
    blocked_alerts: list[WorkItem]
    tasks: TaskPlan

    def queue(self) -> tuple[WorkItem, ...]:
        return (
            *self.human,
            *self.alerts,
            *self.tasks.ready_items(),
            *self.held_human,
            *self.blocked_alerts,
            *self.tasks.blocked,
        )


def _parts(snapshot: WorkSnapshot) -> _Parts:
    human, held_human = human_items(snapshot.human, snapshot.awaiting_human)
    alerts = alert_items(snapshot.alerts, snapshot.awaiting_human)
    return _Parts(
        human,
        held_human,
        [a for a in alerts if a.kind == "alert"],
        [a for a in alerts if a.kind == "blocked"],
        plan_tasks(snapshot),
    )


def select_work(snapshot: WorkSnapshot) -> Selection:
    """Seed 001's order: human > in-progress alert > pending alerts > tasks > blocked > complete."""
    parts = _parts(snapshot)
    queue = parts.queue()
    problems = tuple(parts.tasks.problems)
    if not queue:
        return Selection(kind="complete", item=None, queue=(), problems=problems)
    first = queue[0]
    if first.kind != "blocked":
        return Selection(kind=first.kind, item=first, queue=queue, problems=problems)
    # Everything waits; only blocked tasks wait on barriers (their parser imported only then:
    # a status after an edit of tasks.md may read tasks.md alone).
    from wild.parsers.barriers import CHECKABLE_TYPES  # noqa: PLC0415

    wanted = {b for item in parts.tasks.blocked for b in item.barriers}
    waiting = tuple(b for b in snapshot.barriers if b.id in wanted and b.status == "waiting")
    return Selection(
        kind="blocked",
        item=first,
        queue=queue,
        waiting_barriers=waiting,
        can_check=any(b.type in CHECKABLE_TYPES for b in waiting),
        problems=problems,
    )
