"""The files' part of `wild --status` in two halves: what tasks.md feeds (the tasks' counts,
the work queue, tasks.md's own problems, which analysis tasks are open) and the rest (the
policy, checks, runs, approvals, alerts, barriers and human input, as plain data).

`wild.commands.status` computes the rest from a whole workspace; `join` puts the halves
together, the one place the files' part is made. The rest is kept in `.wild/status.cache.json`
(`wild.commands.status_cache`): after an edit of tasks.md alone (a task added by hand),
`read_files_part` reads tasks.md and the three files the work queue is also selected from
(alerts.jsonl through its summary, barriers.md, human.md), and imports no parser of the
policy, the checks or the runs, nor the approval store (issue 22 item 8).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from wild.commands.work_queue import item_json
from wild.parsers import tasks as tasks_md
from wild.paths import WildPaths
from wild.runs.stage import open_analyses, staged
from wild.selection import Selection, WorkSnapshot, select_work
from wild.store.files import read_text
from wild.store.work_files import (
    open_alerts_of,
    read_alerts,
    read_tasks,
    refusals_of,
    tasks_problems,
)

Data = dict[str, Any]


def join(
    rest: Data,
    tasks: tasks_md.TaskList,
    selection: Selection,
    *,
    tasks_file: str,
    notices: tuple[str, ...],
    refusals: tuple[tuple[str, str], ...],
) -> Data:
    """The files' part: `rest` (`wild.commands.status.rest_part`) with what tasks.md feeds.
    `notices` and `refusals` are read afresh (tasks.md damaged; files wild must not write)."""
    counts = Counter(t.status for t in tasks.tasks)
    # Items made from tasks carry a priority; held inputs and escalated alerts do not.
    blocked = sum(1 for i in selection.queue if i.kind == "blocked" and i.priority is not None)
    research = rest["research"]
    analyses = frozenset(research["analyses"])
    return {
        "questions": rest["questions"],
        "policy": rest["policy"],
        "human": rest["human"],
        "research": {
            "stage": staged(research["running"], analyses, open_analyses(analyses, tasks.tasks)),
            "sweeps": research["sweeps"],
            "runs": research["runs"],
        },
        "alerts": rest["alerts"],
        "tasks": {
            "total": len(tasks.tasks),
            "complete": counts["complete"],
            "inProgress": counts["in-progress"],
            "todo": counts["todo"],
            "cancelled": counts["cancelled"],
            "blocked": blocked,
        },
        "barriers": rest["barriers"],
        "checks": rest["checks"],
        "next": _next_json(selection),
        # state.json's problems go between these two (`status_view.compose`).
        "fileProblems": [str(p) for p in tasks_problems(tasks, tasks_file)] + rest["fileProblems"],
        "moreProblems": list(selection.problems)
        + [message for _, message in refusals]
        + list(notices)
        + rest["policyProblems"],
    }


def read_files_part(paths: WildPaths, rest: Data) -> Data:
    """The files' part after a change to tasks.md (or its backups) alone: tasks.md and the
    queue's other three files read now, joined to the `rest` kept from the files as they are."""
    tasks, damaged = read_tasks(paths)
    return join(
        rest,
        tasks,
        select_work(_snapshot(paths, tasks, alone=rest["queueFromTasksAlone"])),
        tasks_file=str(paths.tasks),
        notices=() if damaged is None else (damaged,),
        refusals=refusals_of(paths),
    )


def _snapshot(paths: WildPaths, tasks: tasks_md.TaskList, *, alone: bool) -> WorkSnapshot:
    """What the queue is selected from; `alone` when the rest was kept from alerts, barriers and
    human input that held nothing the selection reads (a young project's common case): their
    files stand as they were, so they are neither read nor their parsers imported."""
    if alone:
        return WorkSnapshot(tasks=tasks.tasks)
    from wild.parsers import barriers as barriers_md  # noqa: PLC0415
    from wild.parsers import human as human_md  # noqa: PLC0415

    alerts, _ = read_alerts(paths)
    return WorkSnapshot(
        tasks=tasks.tasks,
        alerts=open_alerts_of(alerts),
        barriers=barriers_md.parse(read_text(paths.barriers), str(paths.barriers)).barriers,
        human=human_md.parse(read_text(paths.human), str(paths.human)).inputs,
    )


def _next_json(selection: Selection) -> Data:
    if selection.item is None:
        return {"kind": "complete"}
    data = item_json(selection.item)
    data["kind"] = selection.kind
    return data
