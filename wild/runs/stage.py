"""The research stage and the run counts the files show (SPEC §7), pure: shared by the loop,
`wild --status` and the dashboard.

A sweep is done when all its runs are terminal AND no alert about them is open (seed 000's
double guard). The stage is `running` while a sweep is not done, `analyzing` while a done
sweep's analysis task is open, else `exploring`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Literal, Protocol

from wild.record import record

if TYPE_CHECKING:  # records named, not made: a status after an edit of tasks.md reads no runs
    from wild.parsers.alerts import Alert
    from wild.parsers.runs import RunIndex, RunStatus, SweepRecord
    from wild.parsers.tasks import Task

Stage = Literal["exploring", "running", "analyzing"]
RUN_ALERT_TYPE = "run-failed"


@record
class RunCounts:
    """The banner's run counts."""

    queued: int = 0
    running: int = 0
    finished: int = 0
    failed: int = 0
    stopped: int = 0

    def to_json(self) -> dict[str, int]:
        return asdict(self)


class RunState(Protocol):
    """What the stage and the counts read of a run: a RunRecord, or the runs summary's
    `wild.parsers.runs_summary.RunState` of an ended run."""

    @property
    def status(self) -> RunStatus: ...

    @property
    def terminal(self) -> bool: ...


def counts(runs: Iterable[RunState]) -> RunCounts:
    tally = dict.fromkeys(("queued", "running", "finished", "failed", "stopped"), 0)
    for run in runs:
        key = "queued" if run.status == "planned" else run.status
        tally[key] += 1
    return RunCounts(**tally)


def runs_of_alert(alert: Alert) -> tuple[str, ...]:
    """The run ids a run alert is about (none for any other alert)."""
    if alert.type != RUN_ALERT_TYPE:
        return ()
    runs = alert.context.get("runs")
    return tuple(r for r in runs if isinstance(r, str)) if isinstance(runs, list) else ()


def open_run_alerts(alerts: Iterable[Alert]) -> dict[str, list[str]]:
    """Run id → the open alerts about it."""
    about: dict[str, list[str]] = {}
    for alert in alerts:
        for run_id in runs_of_alert(alert):
            about.setdefault(run_id, []).append(alert.id)
    return about


def sweep_done(
    sweep: SweepRecord, runs: Mapping[str, RunState], open_about: Mapping[str, list[str]]
) -> bool:
    """All runs terminal and none with an open alert (seed 000's double guard)."""
    members = [runs.get(r) for r in sweep.run_ids]
    if any(run is None or not run.terminal for run in members):
        return False
    return not any(r in open_about for r in sweep.run_ids)


def stage_of(
    sweeps: Mapping[str, SweepRecord],
    runs: Mapping[str, RunState],
    open_alerts: Iterable[Alert],
    open_task_ids: frozenset[str],
) -> Stage:
    """The research stage the files show now."""
    return staged(sweeps_running(sweeps, runs, open_alerts), analysis_tasks(sweeps), open_task_ids)


def sweeps_running(
    sweeps: Mapping[str, SweepRecord], runs: Mapping[str, RunState], open_alerts: Iterable[Alert]
) -> bool:
    """Whether an active sweep is not done: the stage is `running` whatever the tasks say."""
    about = open_run_alerts(open_alerts)
    active = [s for s in sweeps.values() if s.status == "active"]
    return any(not sweep_done(s, runs, about) for s in active)


def analysis_tasks(sweeps: Mapping[str, SweepRecord]) -> frozenset[str]:
    """The ids of the sweeps' analysis tasks."""
    return frozenset(s.task for s in sweeps.values() if s.task)


def open_analyses(analyses: frozenset[str], tasks: Iterable[Task]) -> frozenset[str]:
    """Those of the analysis tasks `analyses` that are open in `tasks`."""
    if not analyses:
        return frozenset()
    return frozenset(
        t.id for t in tasks if t.id in analyses and t.status in ("todo", "in-progress")
    )


def staged(running: bool, analyses: frozenset[str], open_task_ids: frozenset[str]) -> Stage:
    """The stage from its two parts: the sweeps (`running`) and the analysis tasks, of which
    those in `open_task_ids` are open (a status after an edit of tasks.md keeps the first)."""
    if running:
        return "running"
    return "analyzing" if not analyses.isdisjoint(open_task_ids) else "exploring"


def stage_in(
    runs: RunIndex,
    open_alerts: Iterable[Alert],
    tasks: Iterable[Task],
    states: Mapping[str, RunState] | None = None,
) -> Stage:
    """The stage of a whole `.wild/` view: its runs (or each run's `states`, when the index
    holds only the runs not ended), open alerts and tasks. Called at every decision: without
    sweeps it looks at nothing, with them only at their analysis tasks."""
    if not runs.sweeps:
        return "exploring"
    analyses = analysis_tasks(runs.sweeps)
    open_tasks = open_analyses(analyses, tasks)
    return stage_of(runs.sweeps, runs.runs if states is None else states, open_alerts, open_tasks)
