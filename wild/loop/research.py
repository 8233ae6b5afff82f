"""Research runs as the loop decides about them, pure: run alerts, choices, sweep ends, stage.

- A failed run raises an alert: its source the run id, the tail of its log in the context,
  choices `rerun` (while an attempt is left: wild.runs.retry), `ignore`, `stop_sweep`. Runs
  that fail together (an alert flood: a bad node, a bug every run hits) raise ONE alert naming
  all their ids, not one prompt each:
  those the same supervisor step sees, and those whose exit markers' own end times lie within
  FLOOD_WINDOW_S of the runs of an alert not yet taken up, which is rewritten to name them
  too (so how the loop's looks happened to split the ends changes nothing).
- An answered run alert acts: `rerun` relaunches each of its runs as a new attempt of the
  same id, `stop_run` stops them, `stop_sweep` stops every run of their sweeps that is not
  terminal; any other choice is only recorded on the alert (a job waiting with
  `wild --wait-alert` reads it).
- A sweep is done when all its runs are terminal AND no alert about them is open (seed
  000's double guard); then its barrier `sweep-<id>-done` is satisfied and the analysis
  task blocked by it becomes selectable.
- The stage (SPEC §7): `running` while a sweep is not done, `analyzing` while a done sweep's
  analysis task is open, else `exploring`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from wild.clock import parse_time
from wild.parsers.alerts import Alert, make_alert, status_update
from wild.parsers.runs import RunRecord, SweepRecord
from wild.runs.retry import DETERMINISTIC
from wild.runs.stage import RUN_ALERT_TYPE, runs_of_alert

RUN_CHOICES = ("rerun", "ignore", "stop_sweep")
NO_RERUN_CHOICES = tuple(c for c in RUN_CHOICES if c != "rerun")  # every run's attempts used
RunAct = Literal["rerun", "stop_run", "stop_sweep"]
TAIL_CHARS = 2000  # of each failed run's log, in its alert's context
# Runs whose own end times lie this close are one flood: a bad node or a shared bug ends them
# within seconds; a loop under load may look minutes apart, which must not split them.
FLOOD_WINDOW_S = 120.0
# A new run alert waits this long before the agent takes it up, while runs of its sweeps still
# run: failures that land meanwhile join it (they may end in the same second, yet reach the
# loop one wake apart), so the agent answers one alert for the flood, not one per look.
FLOOD_SETTLE_S = 3.0


def failure_alert(
    failed: Sequence[RunRecord],
    tails: Mapping[str, str],
    now: datetime,
    *,
    exhausted: Collection[str] = (),
    deterministic: Collection[str] = (),
) -> dict[str, Any]:
    """One alert for runs that failed together (one run: its own alert). It offers `rerun`
    while one of them has an attempt left (`exhausted`: those with none), and names the
    `deterministic` failures (wild.runs.retry), so no one reruns them blindly."""
    ids = [run.id for run in failed]
    first = failed[0]
    repeated = [r for r in ids if r in deterministic]
    if len(failed) == 1:
        source = first.id
        why = first.reason or f"exit code {first.exit_code}"
        description = (
            f"run {first.id} of sweep {first.sweep} failed ({why}), attempt {first.attempt}"
        )
        if repeated:
            description += f", {DETERMINISTIC}: it failed as attempt {first.attempt - 1} did"
    else:
        sweeps = sorted({run.sweep for run in failed})
        source = f"sweep {', '.join(sweeps)}"
        description = f"{len(failed)} runs failed together: {', '.join(ids)}"
        if repeated:
            description += f"; {DETERMINISTIC}: {', '.join(repeated)}"
    spent = [r for r in ids if r in exhausted]
    if spent:
        description += f"; no attempts left (max_attempts): {', '.join(spent)}"
    context: dict[str, Any] = {
        "runs": ids,
        "sweeps": sorted({run.sweep for run in failed}),
        "exit_codes": {run.id: run.exit_code for run in failed},
        "reasons": {run.id: run.reason for run in failed if run.reason},
        "log_tail": {run.id: tails.get(run.id, "")[-TAIL_CHARS:] for run in failed},
    }
    if repeated:
        context["deterministic"] = repeated
    if spent:
        context["no_attempts_left"] = spent
    return make_alert(
        now=now,
        severity="warning",
        source=source,
        type=RUN_ALERT_TYPE,
        description=description,
        context=context,
        choices=RUN_CHOICES if len(spent) < len(ids) else NO_RERUN_CHOICES,
    )


def flood_alert(
    failed: Sequence[RunRecord],
    tails: Mapping[str, str],
    open_alerts: Iterable[Alert],
    runs: Mapping[str, RunRecord],
    now: datetime,
    *,
    exhausted: Collection[str] = (),
    deterministic: Collection[str] = (),
) -> tuple[dict[str, Any], bool]:
    """The alert line for runs that just failed, and whether it rewrites an existing alert:
    the pending run alert whose runs ended within FLOOD_WINDOW_S of these (by the runs' own
    end times) now names them all; without one, a new alert."""
    joined = _flood_of(failed, open_alerts, runs)
    if joined is None:
        return failure_alert(
            failed, tails, now, exhausted=exhausted, deterministic=deterministic
        ), False
    new_ids = {run.id for run in failed}
    earlier = [runs[r] for r in runs_of_alert(joined) if r in runs and r not in new_ids]
    old_tails = joined.context.get("log_tail")
    kept = (
        {k: v for k, v in old_tails.items() if isinstance(v, str)}
        if isinstance(old_tails, Mapping)
        else {}
    )
    marked = {*deterministic, *_ids(joined.context.get("deterministic"))}
    spent = {*exhausted, *_ids(joined.context.get("no_attempts_left"))}
    merged = failure_alert(
        [*earlier, *failed], {**kept, **tails}, now, exhausted=spent, deterministic=marked
    )
    fields = {key: merged[key] for key in ("source", "description", "context", "choices")}
    return status_update(joined, "pending", now, **fields), True


def _ids(value: object) -> list[str]:
    """A list of run ids from an alert's context (a hand-edited one may hold anything)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _flood_of(
    failed: Sequence[RunRecord], open_alerts: Iterable[Alert], runs: Mapping[str, RunRecord]
) -> Alert | None:
    ends = [t for run in failed if (t := parse_time(run.ended_at)) is not None]
    for alert in open_alerts:
        if alert.type != RUN_ALERT_TYPE or alert.status != "pending":
            continue  # one being worked on, or escalated, is not rewritten under its reader
        theirs = [
            t for r in runs_of_alert(alert) if r in runs and (t := parse_time(runs[r].ended_at))
        ]
        if any(abs((a - b).total_seconds()) <= FLOOD_WINDOW_S for a in ends for b in theirs):
            return alert
    return None


def act_of_choice(choice: str | None) -> RunAct | None:
    """What a chosen option does to the alert's runs; None: recorded only."""
    acts: dict[str | None, RunAct] = {
        "rerun": "rerun",
        "stop_run": "stop_run",
        "stop_sweep": "stop_sweep",
    }
    return acts.get(choice)


def runs_to_act_on(
    act: RunAct,
    run_ids: Sequence[str],
    runs: Mapping[str, RunRecord],
    sweeps: Mapping[str, SweepRecord],
) -> tuple[str, ...]:
    """The runs an act touches: `stop_sweep` widens to every open run of the sweeps."""
    if act != "stop_sweep":
        return tuple(r for r in run_ids if r in runs)
    chosen = {runs[r].sweep for r in run_ids if r in runs}
    return tuple(
        run_id
        for sweep_id in sorted(chosen)
        if sweep_id in sweeps
        for run_id in sweeps[sweep_id].run_ids
        if run_id in runs and not runs[run_id].terminal
    )


def settling_alerts(
    open_alerts: Iterable[Alert], runs: Mapping[str, RunRecord], now: datetime
) -> dict[str, float]:
    """Pending run alerts still gathering their flood → seconds until they are handed on: raised
    less than FLOOD_SETTLE_S ago while a run of their sweeps is still going."""
    fresh = [a for a in open_alerts if a.type == RUN_ALERT_TYPE and a.status == "pending"]
    if not fresh:  # the common case, at every decision: no scan of the runs
        return {}
    going = {run.sweep for run in runs.values() if not run.terminal}
    settling: dict[str, float] = {}
    for alert in fresh:
        raised = parse_time(alert.timestamp)
        sweeps = {runs[r].sweep for r in runs_of_alert(alert) if r in runs}
        if raised is None or not sweeps & going:
            continue
        left = FLOOD_SETTLE_S - (now - raised).total_seconds()
        if left > 0:
            settling[alert.id] = left
    return settling
