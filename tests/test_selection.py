"""Work selection (SPEC §2): the seed's order, deterministic, blocked reasons, never a crash."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from wild.parsers import alerts as alerts_log
from wild.parsers import barriers as barriers_md
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.selection import WorkItem, WorkSnapshot, select_work
from wild.selection.cycles import cycle_members


def snapshot(
    tasks: str = "", barriers: str = "", human: str = "", alerts: str = ""
) -> WorkSnapshot:
    index = alerts_log.AlertIndex()
    index.apply(
        a
        for n, line in enumerate(alerts.encode().splitlines(), 1)
        if (a := alerts_log.parse_entry(line, n)[0]) is not None
    )
    return WorkSnapshot(
        tasks=tasks_md.parse(tasks).tasks,
        alerts=index.active(),
        barriers=barriers_md.parse(barriers).barriers,
        human=human_md.parse(human).inputs,
    )


def alert(alert_id: str, severity: str, status: str = "pending", ts: str = "10:00:00") -> str:
    return (
        f'{{"id":"{alert_id}","timestamp":"2026-02-08T{ts}Z","severity":"{severity}",'
        f'"source":"job","type":"t","description":"d-{alert_id}","status":"{status}"}}\n'
    )


def build_queue(snap: WorkSnapshot) -> tuple[tuple[WorkItem, ...], tuple[str, ...]]:
    """The whole ordered queue the selection was made from, and the problems found."""
    selection = select_work(snap)
    return selection.queue, selection.problems


def queue_ids(snap: WorkSnapshot) -> list[tuple[str, str]]:
    return [(item.kind, item.id) for item in build_queue(snap)[0]]


HUMAN = """\
## [PENDING] 2026-02-08T12:00:00Z
### Input:
older normal

## [PENDING] 2026-02-08T13:00:00Z - URGENT
### Input:
newer urgent

## [PROCESSED] 2026-02-08T09:00:00Z
### Input:
done already
"""

TASKS = """\
- [ ] [P3] task-001: low priority first in file
- [ ] [P1] task-002: high priority
- [/] [P2] task-003: started
- [x] [P1] task-004: finished
- [ ] [P1] task-005: waits for low
  - dependsOn: task-001
- [-] [P1] task-006: cancelled
- [ ] [P1] task-007: depends on cancelled
  - dependsOn: task-006
- [ ] [P1] task-008: gated
  - blockedBy: gate
- [ ] [P1] task-009: typo
  - dependsOn: task-999
"""

BARRIERS = """\
## [WAITING] gate
- Type: command-check
- Check: true
- Result: "3 jobs left"
"""


def test_the_whole_order_human_alerts_tasks_blocked() -> None:
    snap = snapshot(
        TASKS,
        BARRIERS,
        HUMAN,
        alert("a-info", "info", ts="09:00:00")
        + alert("a-warn", "warning")
        + alert("a-crit-new", "critical", ts="11:00:00")
        + alert("a-crit-old", "critical", ts="10:30:00")
        + alert("a-active", "info", "in-progress")
        + alert("a-done", "critical", "resolved"),
    )
    assert queue_ids(snap) == [
        ("human-input", "2026-02-08T13:00:00Z"),
        ("human-input", "2026-02-08T12:00:00Z"),
        ("alert", "a-active"),
        ("alert", "a-crit-old"),
        ("alert", "a-crit-new"),
        ("alert", "a-warn"),
        ("alert", "a-info"),
        ("task", "task-003"),
        ("task", "task-002"),
        ("task", "task-001"),
        ("blocked", "task-005"),
        ("blocked", "task-007"),
        ("blocked", "task-008"),
        ("blocked", "task-009"),
    ]
    reasons = {item.id: item.reason for item in build_queue(snap)[0] if item.kind == "blocked"}
    assert reasons == {
        "task-005": "waiting for task task-001",
        "task-007": "depends on task-006, which was cancelled",
        "task-008": "waiting for barrier gate: 3 jobs left",
        "task-009": "depends on unknown task task-999",
    }
    assert build_queue(snap)[1] == ("task-009: depends on unknown task task-999",)
    assert select_work(snap).kind == "human-input"


def test_blocked_selection_knows_whether_a_barrier_can_be_checked() -> None:
    tasks = "- [ ] task-1: gated\n  - blockedBy: gate\n"
    checkable = select_work(snapshot(tasks, BARRIERS))
    assert checkable.kind == "blocked"
    assert checkable.can_check is True
    assert [b.id for b in checkable.waiting_barriers] == ["gate"]
    manual = select_work(snapshot(tasks, "## [WAITING] gate\n- Type: manual\n"))
    assert (manual.kind, manual.can_check) == ("blocked", False)
    satisfied = select_work(snapshot(tasks, "## [SATISFIED] gate\n- Type: manual\n"))
    assert (satisfied.kind, satisfied.item and satisfied.item.id) == ("task", "task-1")


def test_complete_when_nothing_is_left() -> None:
    done = snapshot("- [x] task-1: a\n- [-] task-2: b\n", alerts=alert("x", "info", "resolved"))
    selection = select_work(done)
    assert (selection.kind, selection.item, selection.queue) == ("complete", None, ())


def test_cycles_block_and_are_reported() -> None:
    tasks = (
        "- [ ] task-1: a\n  - dependsOn: task-2\n"
        "- [ ] task-2: b\n  - dependsOn: task-1\n"
        "- [ ] task-3: c\n  - dependsOn: task-1\n"
    )
    queue, problems = build_queue(snapshot(tasks))
    reasons = {item.id: item.reason for item in queue}
    assert reasons["task-1"] == "dependency cycle: task-1 → task-2 → task-1"
    assert reasons["task-2"] == "dependency cycle: task-1 → task-2 → task-1"
    assert reasons["task-3"] == "waiting for task task-1"
    assert problems == (
        "task-1: dependency cycle: task-1 → task-2 → task-1",
        "task-2: dependency cycle: task-1 → task-2 → task-1",
    )


def test_escalated_and_awaiting_alerts_wait_for_the_human() -> None:
    snap = snapshot(alerts=alert("a1", "critical", "escalated") + alert("a2", "warning"))
    assert queue_ids(snap) == [("alert", "a2"), ("blocked", "a1")]
    awaiting = WorkSnapshot(alerts=snap.alerts, awaiting_human=frozenset({"a2"}))
    assert queue_ids(awaiting) == [("blocked", "a1"), ("blocked", "a2")]


def test_a_long_dependency_chain_does_not_recurse() -> None:
    lines = ["- [ ] task-0: start\n"]
    lines += [f"- [ ] task-{n}: step\n  - dependsOn: task-{n - 1}\n" for n in range(1, 3000)]
    queue, problems = build_queue(snapshot("".join(lines)))
    assert queue[0].id == "task-0"
    assert len(queue) == 3000
    assert problems == ()


ids = st.sampled_from([f"t{n}" for n in range(6)])


@given(
    st.lists(
        st.tuples(ids, st.sampled_from(" x/-"), st.lists(ids, max_size=3), st.integers(1, 3)),
        max_size=8,
    )
)
def test_any_task_graph_selects_deterministically(
    spec: list[tuple[str, str, list[str], int]],
) -> None:
    text = "".join(
        f"- [{mark}] [P{prio}] {tid}: x\n" + (f"  - dependsOn: {', '.join(deps)}\n" if deps else "")
        for tid, mark, deps, prio in spec
    )
    snap = snapshot(text)
    first, second = select_work(snap), select_work(snap)
    assert first == second
    queue = first.queue
    runnable = [item for item in queue if item.kind == "task"]
    # Every runnable task has all its dependencies complete.
    done = {t.id for t in snap.tasks if t.status == "complete"}
    by_id: dict[str | None, tasks_md.Task] = {}
    for task in snap.tasks:
        by_id.setdefault(task.id, task)
    for item in runnable:
        assert by_id[item.id].status in ("todo", "in-progress")
        assert set(by_id[item.id].depends_on) <= done


def test_a_duplicate_id_is_never_run() -> None:
    queue, problems = build_queue(snapshot("- [x] t1: first\n- [ ] t1: second\n"))
    assert [(i.kind, i.id, i.reason) for i in queue] == [
        ("blocked", "line-2", "duplicate id t1 (line 2); give it a new id")
    ]
    assert problems == ("t1: duplicate id t1 (line 2); give it a new id",)


def test_duplicates_wait_in_file_order_among_the_other_waiting_tasks() -> None:
    """The plan finds duplicates in its first pass and other waits in its second: the queue
    still lists every waiting task in file order, and the problems too."""
    tasks = (
        "- [ ] t1: first\n- [ ] t2: waits\n  - dependsOn: t1\n- [ ] t1: second\n"
        "- [ ] t3: typo\n  - dependsOn: t8\n- [/] t2: again\n- [ ] t4: free\n"
    )
    queue, problems = build_queue(snapshot(tasks))
    assert [(i.kind, i.id) for i in queue] == [
        ("task", "t1"),
        ("task", "t4"),
        ("blocked", "t2"),
        ("blocked", "line-4"),
        ("blocked", "t3"),
        ("blocked", "line-7"),
    ]
    assert problems == (
        "t1: duplicate id t1 (line 4); give it a new id",
        "t3: depends on unknown task t8",
        "t2: duplicate id t2 (line 7); give it a new id",
    )


def test_held_tasks_and_inputs_wait_for_the_human_and_show_why() -> None:
    tasks = "- [/] task-1: asked the human\n- [ ] task-2: after it\n  - dependsOn: task-1\n"
    human = "## [PENDING] 2026-02-08T12:00:00Z\n### Input:\nkept failing\n"
    snap = snapshot(tasks, human=human)
    held = WorkSnapshot(
        tasks=snap.tasks,
        human=snap.human,
        awaiting_human=frozenset({"task-1", "2026-02-08T12:00:00Z"}),
    )
    queue = build_queue(held)[0]
    assert [(i.kind, i.id, i.reason) for i in queue] == [
        ("blocked", "2026-02-08T12:00:00Z", "waiting for the human's answer in human.md"),
        ("blocked", "task-1", "waiting for the human's answer in human.md"),
        ("blocked", "task-2", "waiting for task task-1"),
    ]
    assert select_work(held).kind == "blocked"


barrier_ids = st.sampled_from(["b1", "b2", "b3", "gone"])
task_ids = st.sampled_from(["t1", "t2", "t3", "line-1", "line-2", None])


@given(
    st.lists(
        st.tuples(
            task_ids,
            st.sampled_from(" x/-"),
            st.lists(st.sampled_from(["t1", "t2", "t3", "t9", "line-1"]), max_size=3),
            st.lists(barrier_ids, max_size=2),
            st.integers(0, 3),
        ),
        max_size=10,
    ),
    st.lists(
        st.tuples(
            st.sampled_from(["b1", "b2", "b3"]),
            st.sampled_from(["WAITING", "SATISFIED", "FAILED"]),
            st.sampled_from(["manual", "command-check"]),
        ),
        max_size=3,
    ),
    st.frozensets(st.sampled_from(["t1", "t3", "line-1", "line-2"]), max_size=2),
)
def test_selection_is_the_head_of_the_whole_queue(
    spec: list[tuple[str | None, str, list[str], list[str], int]],
    barrier_spec: list[tuple[str, str, str]],
    held: frozenset[str],
) -> None:
    text = "".join(
        f"- [{mark}] [P{prio}] {f'{tid}: ' if tid else ''}x\n"
        + (f"  - dependsOn: {', '.join(deps)}\n" if deps else "")
        + (f"  - blockedBy: {', '.join(gates)}\n" if gates else "")
        for tid, mark, deps, gates, prio in spec
    )
    barriers = "".join(f"## [{state}] {bid}\n- Type: {kind}\n" for bid, state, kind in barrier_spec)
    snap = snapshot(text, barriers)
    snap = WorkSnapshot(tasks=snap.tasks, barriers=snap.barriers, awaiting_human=held)
    selection = select_work(snap)
    queue = selection.queue
    assert selection.item == (queue[0] if queue else None)
    assert selection.kind == (queue[0].kind if queue else "complete")
    wanted = {b for item in queue for b in item.barriers} if selection.kind == "blocked" else set()
    waiting = tuple(b for b in snap.barriers if b.id in wanted and b.status == "waiting")
    assert selection.waiting_barriers == waiting
    assert selection.can_check == any(b.type == "command-check" for b in waiting)


def test_an_id_that_merely_contains_cycle_is_not_reported() -> None:
    tasks = "- [ ] recycle-1: first\n- [ ] task-2: then\n  - dependsOn: recycle-1\n"
    queue, problems = build_queue(snapshot(tasks))
    assert [(i.kind, i.id, i.reason) for i in queue] == [
        ("task", "recycle-1", None),
        ("blocked", "task-2", "waiting for task recycle-1"),
    ]
    assert problems == ()


def test_blocked_items_are_the_work_items_their_fields_make() -> None:
    """The plan makes blocked items as bare tuples (fast); they must be the `WorkItem(...)`
    that the same fields make, every default included."""
    snap = snapshot(TASKS, BARRIERS)
    blocked = [item for item in select_work(snap).queue if item.kind == "blocked"]
    assert len(blocked) == 4
    for item in blocked:
        task = next(t for t in snap.tasks if t.id == item.id)
        expected = WorkItem(
            "blocked",
            item.id,
            task.text,
            item.reason,
            item.barriers,
            priority=task.priority,
            status=task.status,
        )
        assert type(item) is WorkItem
        assert item == expected
        assert item._asdict() == expected._asdict()
    assert [item.barriers for item in blocked] == [(), (), ("gate",), ()]


def _on_some_cycle(deps: dict[str, list[str]], start: str) -> bool:
    """Whether `start` reaches itself along `deps` (the brute-force definition)."""
    seen: set[str] = set()
    todo = list(deps.get(start, ()))
    while todo:
        node = todo.pop()
        if node == start:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(deps.get(node, ()))
    return False


@given(
    st.lists(
        st.tuples(ids, st.sampled_from(" x/-"), st.lists(ids, max_size=3)),
        max_size=10,
    )
)
def test_cycles_found_are_real_and_found_whenever_there_is_one(
    spec: list[tuple[str, str, list[str]]],
) -> None:
    """`cycle_members` (peeled in one pass first, then searched): each path it names is a real
    cycle among unfinished tasks, and it names one whenever the graph has one."""
    text = "".join(
        f"- [{mark}] {tid}: x\n" + (f"  - dependsOn: {', '.join(deps)}\n" if deps else "")
        for tid, mark, deps in spec
    )
    tasks = tasks_md.parse(text).tasks
    by_id: dict[str, tasks_md.Task] = {}
    for task in tasks:
        by_id.setdefault(task.id or "", task)
    unfinished = {key for key, task in by_id.items() if task.status in ("todo", "in-progress")}
    linked = [task for key, task in by_id.items() if key in unfinished and task.depends_on]
    found = cycle_members(by_id, linked)
    graph = {
        key: [d for d in task.depends_on if d in unfinished]
        for key, task in by_id.items()
        if task in linked
    }
    for member, path in found.items():
        assert member in path and path[0] == path[-1]
        assert all(b in graph.get(a, ()) for a, b in itertools.pairwise(path))
    assert bool(found) == any(_on_some_cycle(graph, key) for key in graph)
