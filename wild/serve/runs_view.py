"""Sweeps, runs and their metric curves for the dashboard, read from runs.jsonl and metrics.jsonl.

runs.jsonl comes read already (the workspace's `RunIndex`, wild.store.runs_log).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import orjson

from wild.parsers.jsonl import split_complete_lines
from wild.parsers.lines import Problem
from wild.parsers.runs import RUN_STATUSES, RunIndex, RunRecord
from wild.paths import WildPaths
from wild.store.files import read_bytes
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


def parse_metrics(
    data: bytes, file: str
) -> tuple[dict[str, list[tuple[float, float]]], list[Problem]]:
    """Each numeric metric's (step, value) points; a line without a numeric step uses its index."""
    lines, _ = split_complete_lines(data)
    series: dict[str, list[tuple[float, float]]] = {}
    problems: list[Problem] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            # Python's json.dumps writes NaN and Infinity (a diverging loss does): read them,
            # then leave the non-finite values out of the curve.
            try:
                obj = json.loads(raw)
            except ValueError:
                problems.append(Problem(file, number, "not valid JSON; skipped"))
                continue
        if not isinstance(obj, dict):
            problems.append(Problem(file, number, "not a JSON object; skipped"))
            continue
        step = obj.get("step")
        x = float(step) if isinstance(step, int | float) and _finite(step) else float(number)
        for key, value in obj.items():
            if key != "step" and _finite(value):
                series.setdefault(str(key), []).append((x, float(value)))
    return {key: thin(points) for key, points in series.items()}, problems


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


Curves = dict[str, list[tuple[float, float]]]


def run_metrics(
    paths: WildPaths, run_id: str, cache: ParseCache | None = None
) -> tuple[Curves, list[Problem]]:
    """The curves of one run from `.wild/runs/<id>/metrics.jsonl` (none when it has no file);
    with a `cache`, a file that has not changed is not parsed again."""
    path: Path = paths.run_dir(run_id) / "metrics.jsonl"

    def read() -> tuple[Curves, list[Problem]]:
        return parse_metrics(read_bytes(path), str(path))

    return read() if cache is None else cache.get(path, read)


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
        "startedAt": run.started_at,
        "endedAt": run.ended_at,
        "metrics": dict(run.metrics) if run.metrics is not None else None,
    }


def runs_view(
    paths: WildPaths, index: RunIndex, *, offset: int, limit: int, cache: ParseCache | None = None
) -> tuple[dict[str, Any], list[Problem]]:
    """Sweeps (newest first) and one page of runs, each with its curves."""
    runs = list(index.runs.values())
    shown = runs[offset : offset + limit]
    problems: list[Problem] = []
    rows = []
    for run in shown:
        curves, found = run_metrics(paths, run.id, cache)
        problems.extend(found)
        rows.append({**run_json(run), "curves": curves})
    sweeps = [
        {
            "id": sweep.id,
            "name": sweep.name,
            "status": sweep.status,
            "runs": len(sweep.run_ids),
            "counts": dict(Counter(r.status for r in index.of_sweep(sweep.id))),
            "cut": sweep.cut,
            "createdAt": sweep.created_at,
        }
        for sweep in reversed(list(index.sweeps.values()))
    ]
    page = {"total": len(runs), "offset": offset, "limit": limit, "rows": rows}
    return {"sweeps": sweeps, "runs": page, "counts": run_counts(index)}, problems
