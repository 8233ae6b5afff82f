"""Sweeps, runs and their metric curves for the dashboard, read from runs.jsonl and each
run's metric files (wild.metrics: every format its trackers write).

runs.jsonl comes read already (the workspace's `RunIndex`, wild.store.runs_log).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, TypeVar

from wild.metrics.follow import MetricsView, RunMetrics
from wild.parsers.early_stop import early_stopped
from wild.parsers.metric_formats import diverged
from wild.parsers.run_compare import band, group_runs, label, spans_decades
from wild.parsers.runs import RUN_STATUSES, RunIndex, RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.workspace import ParseCache

# A curve keeps at most this many points (evenly thinned, the last kept): an SVG polyline of
# a million steps would freeze the page, and 400 points are more than a panel's pixels.
CURVE_POINTS = 400
_T = TypeVar("_T")


def run_counts(index: RunIndex) -> dict[str, int]:
    """How many runs are in each status (every status present, zero when none)."""
    found = Counter(run.status for run in index.runs.values())
    return {status: found[status] for status in RUN_STATUSES}


def thin(points: list[_T], most: int = CURVE_POINTS) -> list[_T]:
    """At most `most` points, evenly spread, the first and last always kept."""
    if len(points) <= most:
        return points
    step = (len(points) - 1) / (most - 1)
    return [points[round(i * step)] for i in range(most)]


def curves_of(view: MetricsView) -> tuple[Curves, dict[str, float]]:
    """Each metric's finite (step, value) points, thinned, and the step where each metric
    first diverged (NaN or inf: a point no chart can place, so the run is marked instead)."""
    curves: Curves = {}
    broke: dict[str, float] = {}
    for key, points in view.series.items():
        finite = [point for point in points if not diverged(point[1])]
        if len(finite) < len(points):
            broke[key] = next(step for step, value in points if diverged(value))
        if finite:
            curves[key] = thin(finite)
    for key, value in view.final.items():
        if diverged(value):
            broke.setdefault(key, max((p[-1][0] for p in view.series.values() if p), default=0))
    return curves, broke


Curves = dict[str, list[tuple[float, float]]]
OVERLAID_SWEEPS = 3  # the newest sweeps drawn as overlays (each reads all its runs' files)
OVERLAID_RUNS = 200  # a bigger sweep is compared with `wild --compare`, not drawn


def sweep_overlay(
    paths: WildPaths,
    index: RunIndex,
    sweep: SweepRecord,
    cache: ParseCache | None,
) -> dict[str, Any] | None:
    """A sweep's runs overlaid, one chart per metric: each group of runs (its parameters
    but the seed-like ones) as the mean across seeds with a ±std band, whether the values
    span decades (a log axis), and each diverged run with the step it diverged at."""
    runs = list(index.of_sweep(sweep.id))
    if not runs or len(runs) > OVERLAID_RUNS:
        return None
    _, grouped = group_runs(runs)
    views = {}
    for run in runs:
        views[run.id] = run_metrics(paths, run, sweep.spec, cache)
    metrics = sorted({key for view in views.values() for key in view.series})
    charts = {}
    for metric in metrics:
        groups: list[dict[str, Any]] = []
        broke: list[dict[str, Any]] = []
        for number, (key, members) in enumerate(grouped.items()):
            curves = [list(views[r.id].series.get(metric, ())) for r in members]
            line = thin(band(curves))
            if line:
                groups.append(
                    {"label": label(key), "colour": number, "n": len(members), "band": line}
                )
            for run, points in zip(members, curves, strict=True):
                at = next((step for step, value in points if diverged(value)), None)
                if at is not None:
                    last = [v for _, v in points if not diverged(v)]
                    broke.append(
                        {
                            "run": run.id,
                            "label": label(key),
                            "colour": number,
                            "step": at,
                            "value": last[-1] if last else None,
                        }
                    )
        values = [p[1] for g in groups for p in g["band"]]
        charts[metric] = {"log": spans_decades(values), "groups": groups, "diverged": broke}
    return {"metrics": charts}


def run_metrics(
    paths: WildPaths, run: RunRecord, spec: Mapping[str, Any] | None, cache: ParseCache | None
) -> MetricsView:
    """The run's metrics (wild.metrics); with a `cache` its files are followed across
    requests, so a request reads only what was appended since the last."""
    if cache is None:
        return RunMetrics(paths, run, spec).refresh()
    return cache.run_metrics(run.id, lambda: RunMetrics(paths, run, spec)).refresh()


def run_json(run: RunRecord) -> dict[str, Any]:
    return {
        "id": run.id,
        "sweep": run.sweep,
        "status": run.status,
        "params": dict(run.params),
        "backend": run.backend,
        "attempt": run.attempt,
        "exitCode": run.exit_code,
        "reason": run.reason,
        "earlyStopped": early_stopped(run.status, run.reason),
        "startedAt": run.started_at,
        "endedAt": run.ended_at,
        "metrics": dict(run.metrics) if run.metrics is not None else None,
    }


def runs_view(
    paths: WildPaths, index: RunIndex, *, offset: int, limit: int, cache: ParseCache | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Sweeps (newest first) and one page of runs, each with its curves."""
    runs = list(index.runs.values())
    shown = runs[offset : offset + limit]
    problems: list[str] = []
    rows = []
    for run in shown:
        sweep = index.sweeps.get(run.sweep)
        metrics = run_metrics(paths, run, sweep.spec if sweep is not None else None, cache)
        problems.extend(metrics.problems)
        curves, broke = curves_of(metrics)
        rows.append({**run_json(run), "curves": curves, "diverged": broke})
    shown_sweeps = list(reversed(list(index.sweeps.values())))
    overlays = {
        sweep.id: sweep_overlay(paths, index, sweep, cache)
        for sweep in shown_sweeps[:OVERLAID_SWEEPS]
    }
    sweeps = [
        {
            "id": sweep.id,
            "overlay": overlays.get(sweep.id),
            "name": sweep.name,
            "status": sweep.status,
            "runs": len(sweep.run_ids),
            "counts": dict(Counter(r.status for r in index.of_sweep(sweep.id))),
            "cut": sweep.cut,
            "createdAt": sweep.created_at,
        }
        for sweep in shown_sweeps
    ]
    page = {"total": len(runs), "offset": offset, "limit": limit, "rows": rows}
    return {"sweeps": sweeps, "runs": page, "counts": run_counts(index)}, problems
