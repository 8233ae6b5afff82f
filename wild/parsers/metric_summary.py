"""A run's metrics summed up: the last value of every metric, and with a sweep's objective
(`{"metric": "val_loss", "mode": "min"}`) its best value and the step of the best; whether
the run diverged (a NaN or inf where it counts). Pure; the sweep's `objective`, `metrics`
and `total_steps` keys are validated here too.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from wild.parsers.metric_formats import diverged
from wild.record import record

Series = Sequence[tuple[float, float]]  # (step, value) in logged order
Mode = Literal["min", "max"]
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@record
class Objective:
    """What a sweep optimises: one metric, minimised or maximised."""

    metric: str
    mode: Mode = "min"

    def better(self, a: float, b: float) -> bool:
        return a < b if self.mode == "min" else a > b


@record
class RunSummary:
    """One run's metrics in a few numbers (`last` holds every metric's last value, a run's
    `metrics.json` numbers winning over the curves' ends)."""

    last: Mapping[str, float]
    step: float | None = None  # the furthest step logged
    metric: str | None = None  # the objective's metric
    best: float | None = None  # its best finite value
    best_step: float | None = None
    diverged: bool = False
    total_steps: int | None = None
    files: tuple[str, ...] = ()  # the metric files it was read from

    @property
    def value(self) -> float | None:
        """The run's number for comparisons: the objective's last value."""
        return self.last.get(self.metric) if self.metric is not None else None


def summarize(
    series: Mapping[str, Series],
    final: Mapping[str, float],
    objective: Objective | None,
    total_steps: int | None = None,
) -> RunSummary:
    """The summary of a run whose curves are `series` and whose stated final numbers are
    `final`. A run diverged when its objective ever was NaN or inf, or (without an
    objective) when any metric ended so."""
    last = {key: points[-1][1] for key, points in series.items() if points}
    last.update(final)
    steps = [points[-1][0] for points in series.values() if points]
    step = max(steps) if steps else None
    if objective is None:
        return RunSummary(
            last, step, diverged=any(diverged(v) for v in last.values()), total_steps=total_steps
        )
    points = list(series.get(objective.metric, ()))
    if objective.metric in final:
        points.append((step if step is not None else 0.0, final[objective.metric]))
    best: tuple[float, float] | None = None
    for at, value in points:
        if not diverged(value) and (best is None or objective.better(value, best[1])):
            best = (at, value)
    return RunSummary(
        last,
        step,
        metric=objective.metric,
        best=None if best is None else best[1],
        best_step=None if best is None else best[0],
        diverged=any(diverged(value) for _, value in points),
        total_steps=total_steps,
    )


def parse_objective(value: object, errors: list[str]) -> Objective | None:
    """A sweep's `"objective"`, or None with an error added."""
    if isinstance(value, Mapping) and set(value) <= {"metric", "mode"}:
        metric, mode = value.get("metric"), value.get("mode", "min")
        if isinstance(metric, str) and metric.strip() and mode in ("min", "max"):
            return Objective(metric.strip(), mode)
    errors.append(
        '"objective" must be {"metric": NAME, "mode": "min" or "max"}, '
        'e.g. {"metric": "val_loss", "mode": "min"}'
    )
    return None


def parse_metric_globs(value: object, params: Sequence[str], errors: list[str]) -> None:
    """Check a sweep's `"metrics"`: a list of paths or globs (relative to the run's folder or
    workdir) whose `{...}` placeholders are `run_id` or a parameter of the sweep."""
    if not isinstance(value, list) or not value:
        value = [None]
    patterns = [v for v in value if isinstance(v, str) and v.strip()]
    if len(patterns) < len(value):
        errors.append('"metrics" must be a list of paths or globs, e.g. ["logs/**/metrics.csv"]')
        return
    known = {"run_id", *params}
    for pattern in patterns:
        if pattern.startswith("/") or ".." in pattern.split("/"):
            errors.append(f'"metrics" path {pattern!r} must stay inside the run folder or workdir')
        for name in _PLACEHOLDER.findall(pattern):
            if name not in known:
                errors.append(
                    f'"metrics" path {pattern!r} names {{{name}}}; use {{run_id}} or a '
                    f"parameter ({', '.join(sorted(known))})"
                )


def fill_placeholders(pattern: str, run_id: str, params: Mapping[str, Any]) -> str:
    """`pattern` with `{run_id}` and `{param}` replaced by the run's values."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "run_id":
            return run_id
        found = params.get(name)
        return match.group(0) if found is None else _text(found)

    return _PLACEHOLDER.sub(value, pattern)


def _text(value: object) -> str:
    """As the run's command line gets it (wild.runs.resolve.value_text): text as it is,
    anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def parse_total_steps(value: object, errors: list[str]) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        errors.append('"total_steps" must be a whole number of steps, at least 1 (for the ETA)')


def objective_of(spec: Mapping[str, Any]) -> Objective | None:
    """The objective a recorded sweep's spec declares (None when it declares none)."""
    return parse_objective(spec["objective"], []) if "objective" in spec else None


def json_number(value: float) -> float | str:
    """A metric value as JSON holds it: NaN and inf (no JSON number) as "nan", "inf",
    "-inf", which every reader of wild's files reads back as the number."""
    return value if math.isfinite(value) else str(value)
