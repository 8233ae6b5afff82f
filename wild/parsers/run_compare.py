"""A sweep's runs compared across seeds: runs grouped by their parameters (every one but the
seed-like ones, unless told which), and per group n, mean ± std, min and max of one metric,
the best group marked, diverged and failed runs counted apart. Pure: `wild --compare`, the
analysis prompt and the plot all take this one table.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from wild.parsers.early_stop import early_stopped, stopped_early_lines
from wild.parsers.metric_formats import diverged
from wild.parsers.metric_summary import Mode, RunSummary
from wild.parsers.runs import RunRecord
from wild.record import record, replace

# `seed`, `data_seed`, `seed_init`, `rng`, `random_state`: what varies only the randomness.
_SEED_LIKE = re.compile(r"(?i)(seed|rng|random_state)|.*_(seed|rng)|(seed|rng)_.*")
_FAILED = ("failed", "stopped")


def seed_like(name: str) -> bool:
    return _SEED_LIKE.fullmatch(name) is not None


def flat(params: Mapping[str, Any]) -> dict[str, Any]:
    """Params with object values spread into their keys (`{"opt": {"lr": 1}}` → `lr`)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        out.update(flat(value) if isinstance(value, Mapping) else {key: value})
    return out


@record
class Group:
    """The runs that share the grouping parameters' values."""

    params: tuple[tuple[str, Any], ...]
    runs: tuple[str, ...]
    values: tuple[float, ...]  # one per finished run that has the metric, finite
    diverged: int = 0
    failed: int = 0
    unfinished: int = 0  # queued or running: not counted yet
    best: bool = False

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.values) if self.values else None

    @property
    def std(self) -> float | None:
        return statistics.stdev(self.values) if len(self.values) > 1 else None


@record
class Comparison:
    metric: str
    mode: Mode
    best_of_run: bool  # each run's value is its best (the objective) rather than its last
    group_by: tuple[str, ...]
    groups: tuple[Group, ...]
    # (run id, reason) of each run an early-stopping rule ended (counted in `failed` or
    # `diverged`), said under the table.
    stopped_early: tuple[tuple[str, str], ...] = ()


GroupKey = tuple[tuple[str, Any], ...]


def group_runs(
    runs: Sequence[RunRecord], group_by: Sequence[str] | None = None
) -> tuple[tuple[str, ...], dict[GroupKey, list[RunRecord]]]:
    """The grouping parameters (`group_by`, else every one but the seed-like ones) and the
    runs of each group, in first-seen order."""
    names: list[str] = []
    for run in runs:
        names += [k for k in flat(run.params) if k not in names]
    keys = tuple(group_by) if group_by else tuple(k for k in names if not seed_like(k))
    grouped: dict[GroupKey, list[RunRecord]] = {}
    for run in runs:
        params = flat(run.params)
        grouped.setdefault(tuple((k, params.get(k)) for k in keys), []).append(run)
    return keys, grouped


def label(key: GroupKey) -> str:
    return " ".join(f"{k}={_text(v)}" for k, v in key) or "(all runs)"


def run_value(summary: RunSummary, metric: str) -> float | None:
    """A run's number for `metric`: its best when `metric` is the objective, else its last."""
    if summary.metric == metric and summary.best is not None:
        return summary.best
    return summary.last.get(metric)


def compare(
    runs: Sequence[RunRecord],
    summaries: Mapping[str, RunSummary],
    metric: str,
    mode: Mode,
    group_by: Sequence[str] | None = None,
) -> Comparison:
    """Group `runs` (by `group_by`, else every parameter but the seed-like ones)."""
    keys, grouped = group_runs(runs, group_by)
    groups = []
    for key, members in grouped.items():
        values, broke, failed, unfinished = [], 0, 0, 0
        for run in members:
            summary = summaries.get(run.id)
            value = run_value(summary, metric) if summary is not None else None
            if summary is not None and _diverged(summary, metric, value):
                broke += 1
            elif run.status in _FAILED:
                failed += 1
            elif run.status != "finished":
                unfinished += 1
            elif value is not None:
                values.append(value)
        groups.append(
            Group(key, tuple(r.id for r in members), tuple(values), broke, failed, unfinished)
        )
    means = [g.mean for g in groups if g.mean is not None]
    if means:
        top = min(means) if mode == "min" else max(means)
        groups = [replace(g, best=g.mean == top) for g in groups]
    early = tuple(
        (run.id, run.reason or "") for run in runs if early_stopped(run.status, run.reason)
    )
    return Comparison(metric, mode, _is_objective(summaries, metric), keys, tuple(groups), early)


def _diverged(summary: RunSummary, metric: str, value: float | None) -> bool:
    if summary.metric == metric:
        return summary.diverged
    return value is not None and diverged(value)


def _is_objective(summaries: Mapping[str, RunSummary], metric: str) -> bool:
    return any(s.metric == metric for s in summaries.values())


def _num(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.4g}"


def group_label(group: Group) -> str:
    return label(group.params)


def _text(value: object) -> str:
    return value if isinstance(value, str) else "-" if value is None else repr(value)


def format_comparison(comparison: Comparison, sweep: str) -> str:
    """The comparison as a markdown table (the terminal and the analysis prompt)."""
    taken = "best of each run" if comparison.best_of_run else "last value of each run"
    better = "lower" if comparison.mode == "min" else "higher"
    seeds = ", ".join(comparison.group_by) or "nothing"
    head = (
        f"Sweep {sweep}: {comparison.metric} ({taken}; {better} is better), "
        f"runs grouped by {seeds}; * marks the best group."
    )
    rows = [
        "| group | n | mean ± std | min | max | diverged | failed | not ended |",
        "|---" * 8 + "|",
    ]
    for g in comparison.groups:
        spread = f"{_num(g.mean)} ± {_num(g.std)}" if g.std is not None else _num(g.mean)
        low = min(g.values) if g.values else None
        high = max(g.values) if g.values else None
        mark = " *" if g.best else ""
        rows.append(
            f"| {group_label(g)}{mark} | {g.n} | {spread} | {_num(low)} | {_num(high)} "
            f"| {g.diverged} | {g.failed} | {g.unfinished} |"
        )
    early = stopped_early_lines((run, "stopped", why) for run, why in comparison.stopped_early)
    return "\n".join([head, "", *rows, *early])


def comparison_json(comparison: Comparison, sweep: str) -> dict[str, Any]:
    return {
        "sweep": sweep,
        "metric": comparison.metric,
        "mode": comparison.mode,
        "value": "best" if comparison.best_of_run else "last",
        "group_by": list(comparison.group_by),
        "groups": [
            {
                "params": dict(g.params),
                "runs": list(g.runs),
                "n": g.n,
                "mean": g.mean,
                "std": g.std,
                "min": min(g.values) if g.values else None,
                "max": max(g.values) if g.values else None,
                "diverged": g.diverged,
                "failed": g.failed,
                "not_ended": g.unfinished,
                "best": g.best,
            }
            for g in comparison.groups
        ],
        "stopped_early": [{"run": run, "reason": why} for run, why in comparison.stopped_early],
    }


def band(
    curves: Sequence[Sequence[tuple[float, float]]],
) -> list[tuple[float, float, float, float]]:
    """Several runs' curves of one metric as (step, mean, mean - std, mean + std) at every
    step any of them logged, over the finite values there (a diverged point is left out;
    the run is marked instead)."""
    at: dict[float, list[float]] = {}
    for curve in curves:
        for step, value in curve:
            if not diverged(value):
                at.setdefault(step, []).append(value)
    out = []
    for step in sorted(at):
        values = at[step]
        mean = statistics.fmean(values)
        spread = statistics.pstdev(values) if len(values) > 1 else 0.0
        out.append((step, mean, mean - spread, mean + spread))
    return out


def spans_decades(values: Sequence[float], decades: float = 2.0) -> bool:
    """Whether positive `values` span more than `decades` powers of ten (a log axis then)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite or min(finite) <= 0:
        return False
    return math.log10(max(finite) / min(finite)) > decades
