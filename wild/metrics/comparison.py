"""A recorded sweep's comparison (wild.parsers.run_compare) from its runs' kept summaries:
the one place that picks the metric and mode, for `wild --compare`, the analysis prompt and
the plot."""

from __future__ import annotations

from collections.abc import Mapping

from wild.errors import UsageError, WildError
from wild.metrics.kept import summaries
from wild.parsers.metric_summary import Mode, RunSummary, objective_of
from wild.parsers.run_compare import Comparison, compare, format_comparison
from wild.parsers.runs import RunIndex, RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.record import record, replace


def _compared(run: RunRecord) -> RunRecord:
    """What `compare` reads of a run (id, sweep, params, status, reason), nothing else."""
    return RunRecord(run.id, run.sweep, run.params, "", run.status, reason=run.reason)


_NOTHING = RunSummary({})  # the summary of a run that logged no metric


def _compared_summary(summary: RunSummary) -> RunSummary:
    """What `compare` reads of a run's summary: its numbers, not the files they came from;
    one shared object for every run that logged nothing (a sweep of 10,000 held a summary
    each, ~0.2 KB a run, to the end of its table)."""
    numbers = replace(summary, files=())
    return _NOTHING if numbers == _NOTHING else numbers


def find_sweep(paths: WildPaths, index: RunIndex, name: str) -> SweepRecord:
    """The sweep with id `name`, else the latest sweep so named."""
    if name in index.sweeps:
        return index.sweeps[name]
    named = [s for s in index.sweeps.values() if s.name == name]
    if named:
        return max(named, key=lambda s: s.line)
    known = ", ".join(f"{s.id} ({s.name})" for s in index.sweeps.values()) or "none yet"
    raise WildError(f"{paths.runs_log}: no sweep {name} (known: {known}); see `wild --runs`")


def sweep_comparison(
    paths: WildPaths,
    index: RunIndex,
    sweep: SweepRecord,
    metric: str | None = None,
    group_by: tuple[str, ...] = (),
) -> Comparison:
    """The comparison of `sweep`'s runs on `metric` (default: the sweep's objective, else the
    only metric the runs logged)."""
    # One whole record at a time, and the summaries first: the metric is chosen (or the
    # table refused) before the runs are read again for what the table shows of each (id,
    # params, status; a 10,000-run sweep's records were tens of MB at the end, and the
    # runs kept beside the summaries for a refusal ~0.4 KB a run).
    kept = summaries(paths, index, index.each_of_sweep(sweep.id), keep=_compared_summary)
    objective = objective_of(sweep.spec)
    logged = sorted({key for s in kept.values() for key in s.last})
    chosen = metric or (objective.metric if objective is not None else None)
    if chosen is None:
        if len(logged) != 1:
            raise UsageError(
                f"sweep {sweep.id} declares no objective; choose the metric with --metric KEY "
                f"(its runs logged: {', '.join(logged) or 'no metric yet'})"
            )
        chosen = logged[0]
    runs = [_compared(run) for run in index.each_of_sweep(sweep.id)]
    mode: Mode = objective.mode if objective is not None and objective.metric == chosen else "min"
    params = {k for run in runs for k in run.params}
    unknown = [p for p in group_by if p not in params]
    if unknown:
        raise UsageError(
            f"--group-by {unknown[0]}: sweep {sweep.id} has no such parameter "
            f"(it has: {', '.join(sorted(params)) or 'none'})"
        )
    return compare(runs, kept, chosen, mode, group_by or None)


@record
class SweepMetrics:
    """What the analysis prompt shows of a sweep's metrics: each run's summary, and the
    comparison table (or the one line that says why there is none)."""

    summaries: Mapping[str, RunSummary]
    comparison: str


def sweep_metrics(paths: WildPaths, index: RunIndex, sweep: SweepRecord) -> SweepMetrics:
    runs = list(index.of_sweep(sweep.id))
    kept = summaries(paths, index, runs)
    try:
        table = format_comparison(sweep_comparison(paths, index, sweep), sweep.id)
    except WildError as error:
        table = f"No comparison: {error}"
    return SweepMetrics(kept, table)
