"""`wild --status` and `wild --list-work`: the state at a glance and the ordered work queue.

The status has two parts. What the files say (counts, the next work, questions, problems)
is computed here from a parsed workspace; what the loop recorded in state.json is reduced
to plain facts here and judged against now by `wild.commands.status_view`. Both parts are
plain data, so `wild.commands.status_cache` can keep them between two `wild --status`.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from wild.commands.status_view import Data, Judge, compose
from wild.commands.work_queue import item_json
from wild.liveness import check
from wild.parsers.human import HumanQueue
from wild.paths import WildPaths
from wild.policy.model import policy_from_document
from wild.runs.stage import counts, stage_in
from wild.selection import Selection, select_work
from wild.workspace import load_workspace, trust_problems
from wild.workspace_view import Workspace


def questions_json(human: HumanQueue) -> list[dict[str, Any]]:
    """Questions wild asked the human that have no answer yet."""
    return [
        {
            "key": entry.key,
            "related": entry.related_alert,
            "question": entry.content.strip().split("\n", 1)[0],
        }
        for entry in human.inputs
        if entry.status == "question"
    ]


def files_part(ws: Workspace, selection: Selection | None = None) -> Data:
    """What the files say, as plain data: all of the status but the loop's part. It does not
    depend on the time, except through the expiries `valid_until` names."""
    selection = selection if selection is not None else select_work(ws.snapshot())
    tasks = Counter(t.status for t in ws.tasks.tasks)
    # Items made from tasks carry a priority; held inputs and escalated alerts do not.
    blocked_tasks = sum(
        1 for item in selection.queue if item.kind == "blocked" and item.priority is not None
    )
    alerts = [a for a in ws.alerts if a.status != "resolved"]
    severities = Counter(a.severity for a in alerts)
    barrier_counts = Counter(b.status for b in ws.barriers.barriers)
    check_counts = Counter(c.status for c in ws.checks.checks)
    return {
        "questions": questions_json(ws.human),
        "policy": {
            "mode": ws.policy.mode,
            "autonomy": ws.policy.autonomy_level,
            "note": ws.policy_note,
        },
        "human": {"pending": sum(1 for h in ws.human.inputs if h.status == "pending")},
        "research": research_json(ws),
        "alerts": {
            "active": len(alerts),
            "inProgress": sum(1 for a in alerts if a.status == "in-progress"),
            "pending": sum(1 for a in alerts if a.status == "pending"),
            "escalated": sum(1 for a in alerts if a.status == "escalated"),
            "critical": severities["critical"],
            "warning": severities["warning"],
            "info": severities["info"],
        },
        "tasks": {
            "total": len(ws.tasks.tasks),
            "complete": tasks["complete"],
            "inProgress": tasks["in-progress"],
            "todo": tasks["todo"],
            "cancelled": tasks["cancelled"],
            "blocked": blocked_tasks,
        },
        "barriers": {
            "waiting": barrier_counts["waiting"],
            "satisfied": barrier_counts["satisfied"],
            "failed": barrier_counts["failed"],
        },
        "checks": {
            "total": len(ws.checks.checks),
            "passing": check_counts["passing"],
            "failing": check_counts["failing"],
            "pending": check_counts["pending"],
            "strategy": ws.checks.strategy,
            "mode": ws.checks.mode,
        },
        "next": _next_json(selection),
        # state.json's problems go between these two (`status_view.compose`).
        "fileProblems": [str(p) for p in ws.problems],
        "moreProblems": list(selection.problems)
        + [message for _, message in ws.refusals]
        + list(ws.notices)
        + trust_problems(ws)
        + held_runs(ws),
    }


def held_runs(ws: Workspace) -> list[str]:
    """Each sweep whose queued runs wait for a human to approve their program (the policy in
    force requires approval), with the `wild --approve` that lets them run."""
    queued = [run for run in ws.runs.runs.values() if run.status == "queued"]
    if not queued or ws.policy.command_approval != "required":
        return []
    from wild.runs import decide, signing  # noqa: PLC0415  (only with runs waiting)

    admission = decide.admission(queued, key=signing.load_key(), may_run=ws.approvals.allows)
    waiting: dict[str, list[str]] = {}
    for run in admission.held:
        waiting.setdefault(run.sweep, []).append(signing.command_to_approve(run))
    return [
        f"{ws.paths.runs_log}: {len(commands)} run(s) of sweep {sweep} wait for your approval "
        f"of `{commands[0]}`; run `wild --approve {sweep}` to let them run"
        for sweep, commands in waiting.items()
    ]


def valid_until(ws: Workspace, now: datetime) -> datetime | None:
    """When `files_part` may change with no file changing: the next expiry of the policy in
    the file or of the trust recorded for it (None: never)."""
    ends = [
        policy_from_document(ws.policy_doc).expires_at,
        ws.recorded_trust.expires_at if ws.recorded_trust is not None else None,
    ]
    later = [end for end in ends if end is not None and end > now]
    return min(later, default=None)


def read_files_part(paths: WildPaths, now: datetime) -> tuple[Data, float | None]:
    """The files' part read from the files now, and until when it holds (a POSIX time)."""
    ws = load_workspace(paths, now, run_summary=True)  # O(appended) in runs.jsonl
    until = valid_until(ws, now)
    return files_part(ws), None if until is None else until.timestamp()


def status_data(
    ws: Workspace,
    now: datetime | None = None,
    judge: Judge = check,
    selection: Selection | None = None,
) -> Data:
    """Everything `--status` shows, as plain data (the JSON form); `selection` when the caller
    has made it already (the dashboard shows the whole queue too)."""
    # state.json's reader: a status recomputing only the files' part (`status_cache`) needs none.
    from wild.commands.status_facts import read_facts  # noqa: PLC0415

    now = now or datetime.now(UTC)
    return compose(str(ws.paths.root), files_part(ws, selection), read_facts(ws.paths), now, judge)


def _next_json(selection: Selection) -> dict[str, Any]:
    if selection.item is None:
        return {"kind": "complete"}
    data = item_json(selection.item)
    data["kind"] = selection.kind
    return data


def research_json(ws: Workspace) -> dict[str, Any]:
    """The research stage and the run counts (SPEC §7), from runs.jsonl and the alerts."""
    states = ws.runs.runs if ws.run_states is None else ws.run_states
    return {
        "stage": stage_in(ws.runs, ws.open_alerts, ws.tasks.tasks, states),
        "sweeps": len(ws.runs.sweeps),
        "runs": counts(states.values()).to_json(),
    }
