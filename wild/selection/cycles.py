"""Dependency cycles among unfinished tasks, found fast enough for 10,000 tasks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter

from wild.parsers.tasks import Task

_ID_OF = attrgetter("id")


def cycle_members(tasks: Mapping[str, Task], linked: Sequence[Task]) -> dict[str, tuple[str, ...]]:
    """Each unfinished task on a dependency cycle, mapped to the cycle path for the report.

    `linked`: every unfinished task of `tasks` with an id and dependencies, file order.
    Only unfinished tasks count: a cycle through a finished task blocks nobody.
    """
    # Peel off tasks that cannot reach a cycle: those waiting on nothing unfinished, and
    # those waiting only on peeled ones. Dependencies usually come earlier in the file, so
    # one pass in file order peels most (all, without a cycle). `pending` holds the tasks
    # not peeled yet: every one of them is unfinished (`linked` holds only those), so a
    # dependency outside it, finished, unknown or peeled, cannot lead to a cycle.
    pending = set(map(_ID_OF, linked))
    kept: list[Task] = []
    for task in linked:
        if pending.isdisjoint(task.depends_on):
            pending.discard(task.id)
        else:
            kept.append(task)
    # The rest, with their links to each other, peeled the thorough way: repeatedly.
    deps: dict[str, list[str]] = {}
    for task in kept:
        key = task.id
        if key is not None and key in pending:
            deps[key] = [dep for dep in task.depends_on if dep in pending]
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
