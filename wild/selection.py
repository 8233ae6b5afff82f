"""Work selection: a pure, deterministic ordering of everything the loop could do next (SPEC §2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from wild.clock import parse_time
from wild.parsers.alerts import Alert
from wild.parsers.barriers import CHECKABLE_TYPES, Barrier
from wild.parsers.human import HumanInput
from wild.parsers.severity import rank
from wild.parsers.tasks import Task

WorkKind = Literal["human-input", "alert", "task", "blocked"]
SelectionKind = Literal["human-input", "alert", "task", "blocked", "complete"]

OPEN = frozenset({"todo", "in-progress"})
HUMAN_WAIT = "waiting for the human's answer in human.md"


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
            rank(pair[1].severity),
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


def _cycle_members(
    tasks: Mapping[str, Task], linked: Sequence[tuple[str, Task]]
) -> dict[str, tuple[str, ...]]:
    """Each unfinished task on a dependency cycle, mapped to the cycle path for the report.

    `linked`: (id, task) of every unfinished task of `tasks` with dependencies, file order.
    Only unfinished tasks count: a cycle through a finished task blocks nobody.
    """
    # Peel off tasks that cannot reach a cycle: those waiting on nothing unfinished, and
    # those waiting only on peeled ones. Dependencies usually come earlier in the file, so
    # one pass in file order peels most (all, without a cycle).
    has_deps = {key for key, _ in linked}
    waits: dict[str, list[str]] = {}
    peeled: set[str] = set()
    for key, task in linked:
        targets = [
            d for d in task.depends_on if (t := tasks.get(d)) is not None and t.status in OPEN
        ]
        waits[key] = targets
        for target in targets:
            if target in has_deps and target not in peeled:
                break
        else:
            peeled.add(key)
    # The rest, with their links to each other, peeled the thorough way: repeatedly.
    deps = {
        key: [d for d in targets if d in has_deps and d not in peeled]
        for key, targets in waits.items()
        if key not in peeled
    }
    if not deps:
        return {}
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
    remaining = [key for key, count in waiting_on.items() if count]
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


class _TaskPlan(NamedTuple):
    """Which open tasks can run and which wait, before any `WorkItem` is made for them.

    Tasks are named by their place in `tasks` (file order).
    """

    tasks: tuple[Task, ...]
    active: list[int]  # can run, already in progress: file order
    todo: list[tuple[int, int]]  # can start: (priority, place)
    blocked: list[tuple[int, str, str, tuple[str, ...]]]  # (place, key, reason, barriers)
    problems: list[str]

    def ready(self) -> list[Task]:
        """The runnable tasks in queue order: those in progress, then by priority."""
        return [self.tasks[at] for at in self.active + [at for _, at in sorted(self.todo)]]

    def blocked_items(self) -> list[WorkItem]:
        return [_blocked_item(self.tasks, *blocked) for blocked in self.blocked]


def _plan_tasks(snapshot: WorkSnapshot) -> _TaskPlan:
    """One pass over every task, then one over those with dependencies or barriers (which
    need every id known); a reason is written only for a task that waits.

    Fast on purpose: the loop selects on every iteration, often among 10,000 tasks.
    """
    tasks = snapshot.tasks
    awaiting = snapshot.awaiting_human
    by_id: dict[str, Task] = {}
    first_with = by_id.setdefault
    active: list[int] = []
    todo: list[tuple[int, int]] = []
    later: list[int] = []
    blocked: list[tuple[int, str, str, tuple[str, ...]]] = []
    problems: list[tuple[int, str]] = []
    for at, task in enumerate(tasks):
        task_id = task.id
        status = task.status
        if task_id is not None and first_with(task_id, task) is not task:
            if status in OPEN:
                # Work is found by id, so a second task with the same id could never be run
                # safely: it waits until a human renames it.
                line = task.span.start + 1
                duplicate = f"duplicate id {task_id} (line {line}); give it a new id"
                blocked.append((at, f"line-{line}", duplicate, ()))
                problems.append((at, f"{task_id}: {duplicate}"))
        elif status not in OPEN:
            continue
        elif task_id is None or task.depends_on or task.blocked_by or task_id in awaiting:
            later.append(at)
        elif status == "todo":
            todo.append((task.priority, at))  # most tasks: nothing to wait for
        else:
            active.append(at)
    checked = [tasks[at] for at in later]
    linked = [(t.id, t) for t in checked if t.id is not None and t.depends_on]
    cycles = _cycle_members(by_id, linked)
    barriers = {b.id: b for b in snapshot.barriers}
    for at, task in zip(later, checked, strict=True):
        key = task_key(task)
        reason: str | None
        waiting_on: tuple[str, ...]
        if key in awaiting:
            reason, waiting_on = HUMAN_WAIT, ()
        else:
            reason, waiting_on = _blocked_reason(task, by_id, barriers, cycles)
        if reason is None:
            if task.status == "in-progress":
                active.append(at)
            else:
                todo.append((task.priority, at))
            continue
        blocked.append((at, key, reason, waiting_on))
        # Typos in task ids and cycles need a human; a barrier the agent has not written
        # yet is normal (it creates one when it launches the job), so only the reason says so.
        if key not in awaiting and (
            key in cycles or any(dep not in by_id for dep in task.depends_on)
        ):
            problems.append((at, f"{key}: {reason}"))
    active.sort()
    blocked.sort()
    problems.sort()
    return _TaskPlan(tasks, active, todo, blocked, [problem for _, problem in problems])


def _ready_item(task: Task) -> WorkItem:
    return WorkItem("task", task_key(task), task.text, priority=task.priority, status=task.status)


def _blocked_item(
    tasks: tuple[Task, ...], at: int, key: str, reason: str, waiting_on: tuple[str, ...]
) -> WorkItem:
    task = tasks[at]
    return WorkItem(
        "blocked", key, task.text, reason, waiting_on, priority=task.priority, status=task.status
    )


class _Parts(NamedTuple):
    """The queue in its parts, before they are put in order."""

    human: list[WorkItem]
    held_human: list[WorkItem]
    alerts: list[WorkItem]
    blocked_alerts: list[WorkItem]
    tasks: _TaskPlan

    def queue(self) -> tuple[WorkItem, ...]:
        return (
            *self.human,
            *self.alerts,
            *[_ready_item(task) for task in self.tasks.ready()],
            *self.held_human,
            *self.blocked_alerts,
            *self.tasks.blocked_items(),
        )


def _parts(snapshot: WorkSnapshot) -> _Parts:
    human, held_human = _human_items(snapshot.human, snapshot.awaiting_human)
    alerts = _alert_items(snapshot.alerts, snapshot.awaiting_human)
    return _Parts(
        human,
        held_human,
        [a for a in alerts if a.kind == "alert"],
        [a for a in alerts if a.kind == "blocked"],
        _plan_tasks(snapshot),
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
    # Everything waits; only blocked tasks wait on barriers.
    wanted = {b for *_, waiting_on in parts.tasks.blocked for b in waiting_on}
    waiting = tuple(b for b in snapshot.barriers if b.id in wanted and b.status == "waiting")
    return Selection(
        kind="blocked",
        item=first,
        queue=queue,
        waiting_barriers=waiting,
        can_check=any(b.type in CHECKABLE_TYPES for b in waiting),
        problems=problems,
    )
