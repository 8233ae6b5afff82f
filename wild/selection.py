"""Work selection: a pure, deterministic ordering of everything the loop could do next (SPEC §2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from wild.clock import parse_time
from wild.parsers.alerts import Alert
from wild.parsers.barriers import Barrier
from wild.parsers.human import HumanInput
from wild.parsers.tasks import Task

WorkKind = Literal["human-input", "alert", "task", "blocked"]
SelectionKind = Literal["human-input", "alert", "task", "blocked", "complete"]

SEVERITY_ORDER: Mapping[str, int] = {"critical": 0, "warning": 1, "info": 2}
# Barriers the checker can test by itself; webhook and manual ones only change from outside.
CHECKABLE_TYPES = frozenset({"command-check", "file-exists", "count-based"})
OPEN = frozenset({"todo", "in-progress"})
HUMAN_WAIT = "waiting for the human's answer in human.md"


@dataclass(frozen=True)
class WorkItem:
    """One entry of the ordered queue that `wild --list-work` prints."""

    kind: WorkKind
    id: str
    title: str
    reason: str | None = None  # why a blocked item waits
    barriers: tuple[str, ...] = ()  # barriers a blocked task waits on
    urgent: bool = False
    severity: str | None = None
    priority: int | None = None
    status: str | None = None


@dataclass(frozen=True)
class WorkSnapshot:
    """Everything selection looks at, already parsed; no I/O happens past this point."""

    tasks: tuple[Task, ...] = ()
    alerts: tuple[Alert, ...] = ()  # latest state of each alert that is not resolved
    barriers: tuple[Barrier, ...] = ()
    human: tuple[HumanInput, ...] = ()
    # Alert ids whose blocking escalation still waits for the human's answer.
    awaiting_human: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
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


def _sort_time(text: str) -> float:
    moment = parse_time(text)
    return moment.timestamp() if moment is not None else float("inf")


def _human_items(
    inputs: Iterable[HumanInput], awaiting_human: frozenset[str]
) -> tuple[list[WorkItem], list[WorkItem]]:
    """Pending inputs, urgent first then oldest; and those held for the human's answer."""
    pending = [(i, h) for i, h in enumerate(inputs) if h.status == "pending"]
    pending.sort(key=lambda pair: (not pair[1].urgent, _sort_time(pair[1].timestamp), pair[0]))
    ready: list[WorkItem] = []
    held: list[WorkItem] = []
    for _, entry in pending:
        waits = entry.key in awaiting_human
        (held if waits else ready).append(
            WorkItem(
                kind="blocked" if waits else "human-input",
                id=entry.key,
                title=_first_line(entry.content),
                reason=HUMAN_WAIT if waits else None,
                urgent=entry.urgent,
                status="pending",
            )
        )
    return ready, held


def _first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _alert_items(alerts: Iterable[Alert], awaiting_human: frozenset[str]) -> list[WorkItem]:
    indexed = list(enumerate(alerts))
    active = [
        (i, a) for i, a in indexed if a.status == "in-progress" and a.id not in awaiting_human
    ]
    pending = [(i, a) for i, a in indexed if a.status == "pending" and a.id not in awaiting_human]
    pending.sort(
        key=lambda pair: (
            SEVERITY_ORDER.get(pair[1].severity, 3),
            _sort_time(pair[1].timestamp),
            pair[0],
        )
    )
    items = [_alert_item(a) for _, a in active + pending]
    waiting = [
        a
        for _, a in indexed
        if a.status == "escalated" or (a.id in awaiting_human and a.status != "resolved")
    ]
    items += [
        WorkItem(
            kind="blocked",
            id=a.id,
            title=a.description,
            reason=f"{HUMAN_WAIT} (escalated)",
            severity=a.severity,
            status=a.status,
        )
        for a in waiting
    ]
    return items


def _alert_item(alert: Alert) -> WorkItem:
    return WorkItem(
        kind="alert",
        id=alert.id,
        title=f"{alert.source}: {alert.description}",
        severity=alert.severity,
        status=alert.status,
    )


def _cycle_members(tasks: Mapping[str, Task]) -> dict[str, tuple[str, ...]]:
    """Each unfinished task on a dependency cycle, mapped to the cycle path for the report.

    Only unfinished tasks count: a cycle through a finished task blocks nobody.
    """
    open_ids = {key for key, task in tasks.items() if task.status in OPEN}
    deps = {key: [d for d in tasks[key].depends_on if d in open_ids] for key in open_ids}
    # Peel off tasks that cannot reach a cycle (sinks, repeatedly): O(tasks + edges), and
    # what remains is usually empty, so the path-finding search below rarely runs.
    waiting_on = {key: len(set(targets)) for key, targets in deps.items()}
    needed_by: dict[str, list[str]] = {}
    for key, targets in deps.items():
        for target in set(targets):
            needed_by.setdefault(target, []).append(key)
    sinks = [key for key, count in waiting_on.items() if count == 0]
    while sinks:
        for user in needed_by.get(sinks.pop(), ()):
            waiting_on[user] -= 1
            if waiting_on[user] == 0:
                sinks.append(user)
    # Dicts keep file order, so the search (and which path names a cycle) is deterministic.
    remaining = [key for key in tasks if waiting_on.get(key)]
    on_cycle: dict[str, tuple[str, ...]] = {}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for start in remaining:
        if state.get(start):
            continue
        # Iterative DFS: a 10,000-task chain must not hit Python's recursion limit.
        path: list[str] = []
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            node, index = stack.pop()
            if index == 0:
                state[node] = 1
                path.append(node)
            node_deps = deps[node]
            if index < len(node_deps):
                stack.append((node, index + 1))
                nxt = node_deps[index]
                if state.get(nxt) == 1:
                    cycle = (*path[path.index(nxt) :], nxt)
                    for member in cycle:
                        on_cycle.setdefault(member, cycle)
                elif not state.get(nxt):
                    stack.append((nxt, 0))
            else:
                state[node] = 2
                path.pop()
    return on_cycle


def _blocked_reason(
    task: Task,
    by_id: Mapping[str, Task],
    barriers: Mapping[str, Barrier],
    cycles: Mapping[str, tuple[str, ...]],
) -> tuple[str | None, tuple[str, ...]]:
    """Why `task` cannot start now (None when it can), and the barriers it waits on."""
    reasons: list[str] = []
    key = task_key(task)
    if key in cycles:
        reasons.append("dependency cycle: " + " → ".join(cycles[key]))
    for dep in task.depends_on:
        other = by_id.get(dep)
        if other is None:
            reasons.append(f"depends on unknown task {dep}")
        elif other.status == "cancelled":
            reasons.append(f"depends on {dep}, which was cancelled")
        elif other.status != "complete" and key not in cycles:
            reasons.append(f"waiting for task {dep}")
    waiting_on: list[str] = []
    for barrier_id in task.blocked_by:
        barrier = barriers.get(barrier_id)
        if barrier is None:
            reasons.append(f"blocked by unknown barrier {barrier_id}")
        elif barrier.status == "failed":
            reasons.append(f"barrier {barrier_id} failed")
            waiting_on.append(barrier_id)
        elif barrier.status != "satisfied":
            result = f": {barrier.result}" if barrier.result else ""
            reasons.append(f"waiting for barrier {barrier_id}{result}")
            waiting_on.append(barrier_id)
    return ("; ".join(reasons) if reasons else None), tuple(waiting_on)


def _task_items(snapshot: WorkSnapshot) -> tuple[list[WorkItem], list[WorkItem], list[str]]:
    by_id: dict[str, Task] = {}
    problems: list[str] = []
    for task in snapshot.tasks:
        if task.id is not None and task.id not in by_id:
            by_id[task.id] = task
    barriers = {b.id: b for b in snapshot.barriers}
    cycles = _cycle_members(by_id)
    ready_active: list[WorkItem] = []
    ready_todo: list[tuple[int, int, WorkItem]] = []
    blocked: list[WorkItem] = []
    for order, task in enumerate(snapshot.tasks):
        if task.status not in OPEN:
            continue
        if task.id is not None and by_id[task.id] is not task:
            # Work is found by id, so a second task with the same id could never be run
            # safely: it waits until a human renames it.
            duplicate = f"duplicate id {task.id} (line {task.span.start + 1}); give it a new id"
            blocked.append(
                WorkItem(
                    "blocked",
                    f"line-{task.span.start + 1}",
                    task.text,
                    duplicate,
                    priority=task.priority,
                    status=task.status,
                )
            )
            problems.append(f"{task.id}: {duplicate}")
            continue
        key = task_key(task)
        reason: str | None
        waiting_on: tuple[str, ...]
        if key in snapshot.awaiting_human:
            reason, waiting_on = HUMAN_WAIT, ()
        else:
            reason, waiting_on = _blocked_reason(task, by_id, barriers, cycles)
        if reason is not None:
            blocked.append(
                WorkItem(
                    "blocked",
                    key,
                    task.text,
                    reason,
                    waiting_on,
                    False,
                    None,
                    task.priority,
                    task.status,
                )
            )
            # Typos in task ids and cycles need a human; a barrier the agent has not written
            # yet is normal (it creates one when it launches the job), so only the reason says so.
            if "cycle" in reason or "unknown task" in reason:
                problems.append(f"{key}: {reason}")
            continue
        item = WorkItem("task", key, task.text, priority=task.priority, status=task.status)
        if task.status == "in-progress":
            ready_active.append(item)
        else:
            ready_todo.append((task.priority, order, item))
    ready_todo.sort(key=lambda triple: (triple[0], triple[1]))
    return ready_active + [item for _, _, item in ready_todo], blocked, problems


def build_queue(snapshot: WorkSnapshot) -> tuple[tuple[WorkItem, ...], tuple[str, ...]]:
    """The whole ordered queue (runnable work first, blocked items last) and problems found."""
    human, held_human = _human_items(snapshot.human, snapshot.awaiting_human)
    alerts = _alert_items(snapshot.alerts, snapshot.awaiting_human)
    runnable_alerts = [a for a in alerts if a.kind == "alert"]
    blocked_alerts = [a for a in alerts if a.kind == "blocked"]
    tasks, blocked_tasks, problems = _task_items(snapshot)
    queue = human + runnable_alerts + tasks + held_human + blocked_alerts + blocked_tasks
    return tuple(queue), tuple(problems)


def select_work(snapshot: WorkSnapshot) -> Selection:
    """Seed 001's order: human > in-progress alert > pending alerts > tasks > blocked > complete."""
    queue, problems = build_queue(snapshot)
    if queue and queue[0].kind != "blocked":
        first = queue[0]
        return Selection(kind=first.kind, item=first, queue=queue, problems=problems)
    if queue:
        wanted = {b for item in queue for b in item.barriers}
        waiting = tuple(b for b in snapshot.barriers if b.id in wanted and b.status == "waiting")
        can_check = any(b.type in CHECKABLE_TYPES for b in waiting)
        return Selection(
            kind="blocked",
            item=queue[0],
            queue=queue,
            waiting_barriers=waiting,
            can_check=can_check,
            problems=problems,
        )
    return Selection(kind="complete", item=None, queue=(), problems=problems)
