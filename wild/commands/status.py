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

from wild.commands.status_tasks import join
from wild.commands.status_view import Data, Judge, compose
from wild.liveness import check
from wild.parsers.human import HumanQueue
from wild.paths import WildPaths
from wild.policy.model import policy_from_document
from wild.runs.stage import analysis_tasks, counts, stage_in, sweeps_running
from wild.selection import Selection, select_work
from wild.store.work_files import tasks_problems
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
    return join(
        rest_part(ws),
        ws.tasks,
        selection if selection is not None else select_work(ws.snapshot()),
        tasks_file=str(ws.paths.tasks),
        notices=ws.notices,
        refusals=ws.refusals,
    )


def rest_part(ws: Workspace) -> Data:
    """What the files but tasks.md say, as plain data (`status_tasks.join` adds tasks.md's)."""
    alerts = [a for a in ws.alerts if a.status != "resolved"]
    severities = Counter(a.severity for a in alerts)
    barrier_counts = Counter(b.status for b in ws.barriers.barriers)
    check_counts = Counter(c.status for c in ws.checks.checks)
    states = ws.runs.runs if ws.run_states is None else ws.run_states
    # The problems of every file but tasks.md: `assemble_workspace` puts tasks.md's first.
    own = len(tasks_problems(ws.tasks, str(ws.paths.tasks)))
    return {
        "questions": questions_json(ws.human),
        "policy": {
            "mode": ws.policy.mode,
            "autonomy": ws.policy.autonomy_level,
            "note": ws.policy_note,
        },
        "human": {"pending": sum(1 for h in ws.human.inputs if h.status == "pending")},
        "research": {
            "running": sweeps_running(ws.runs.sweeps, states, ws.open_alerts),
            "analyses": sorted(analysis_tasks(ws.runs.sweeps)),
            "sweeps": len(ws.runs.sweeps),
            "runs": counts(states.values()).to_json(),
        },
        "alerts": {
            "active": len(alerts),
            "inProgress": sum(1 for a in alerts if a.status == "in-progress"),
            "pending": sum(1 for a in alerts if a.status == "pending"),
            "escalated": sum(1 for a in alerts if a.status == "escalated"),
            "critical": severities["critical"],
            "warning": severities["warning"],
            "info": severities["info"],
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
        "fileProblems": [str(p) for p in ws.problems[own:]],
        "policyProblems": trust_problems(ws) + held_runs(ws),
        # Nothing of the queue's other files for the selection to read (`status_tasks`).
        "queueFromTasksAlone": not (ws.open_alerts or ws.barriers.barriers or ws.human.inputs),
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


def read_files_part(paths: WildPaths, now: datetime) -> tuple[Data, Data, float | None]:
    """The files' part read from the files now, the rest of it (`rest_part`: all but what
    tasks.md feeds), and until when both hold (a POSIX time)."""
    ws = load_workspace(paths, now, run_summary=True)  # O(appended) in runs.jsonl
    until = valid_until(ws, now)
    rest = rest_part(ws)
    return (
        join(
            rest,
            ws.tasks,
            select_work(ws.snapshot()),
            tasks_file=str(paths.tasks),
            notices=ws.notices,
            refusals=ws.refusals,
        ),
        rest,
        None if until is None else until.timestamp(),
    )


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


def research_json(ws: Workspace) -> dict[str, Any]:
    """The research stage and the run counts (SPEC §7), from runs.jsonl and the alerts."""
    states = ws.runs.runs if ws.run_states is None else ws.run_states
    return {
        "stage": stage_in(ws.runs, ws.open_alerts, ws.tasks.tasks, states),
        "sweeps": len(ws.runs.sweeps),
        "runs": counts(states.values()).to_json(),
    }
