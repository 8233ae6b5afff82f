"""A sweep's runs as the analysis reads them: params, status, and the metrics each run wrote."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wild.parsers.runs import RunIndex, SweepRecord
from wild.paths import WildPaths
from wild.store.files import read_text
from wild.store.runs_log import read_runs


@dataclass(frozen=True)
class RunResult:
    """One run of a sweep: `summary` is its metrics.json, `curve` its metrics.jsonl lines."""

    id: str
    params: Mapping[str, Any]
    status: str
    attempt: int
    summary: Mapping[str, Any]
    curve: tuple[Mapping[str, Any], ...]
    error: str | None = None  # the last line of its log that reads like an error


def read_index(paths: WildPaths) -> RunIndex:
    """Every sweep and run in runs.jsonl, the latest line per id; unusable lines skipped."""
    return read_runs(paths.runs_log).index


def latest_sweep(index: RunIndex) -> SweepRecord | None:
    """The sweep written last (runs.jsonl is in time order)."""
    return max(index.sweeps.values(), key=lambda s: s.line, default=None)


def _json_lines(text: str) -> tuple[Mapping[str, Any], ...]:
    lines: list[Mapping[str, Any]] = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:  # a torn last line of a run killed mid-write
            continue
        if isinstance(value, dict):
            lines.append(value)
    return tuple(lines)


def _summary(path: Path) -> Mapping[str, Any]:
    try:
        value = json.loads(read_text(path) or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


_ERROR = re.compile(r"error|exception|traceback|killed|out of memory", re.IGNORECASE)


def error_line(log: str) -> str | None:
    """The last line of a run's log that reads like an error, for a report or an alert."""
    return next((line.strip() for line in reversed(log.splitlines()) if _ERROR.search(line)), None)


def load_results(paths: WildPaths, sweep_id: str | None = None) -> tuple[RunResult, ...]:
    """The runs of `sweep_id` (default: the latest sweep) in grid order, with their metrics."""
    index = read_index(paths)
    sweep = index.sweeps.get(sweep_id) if sweep_id else latest_sweep(index)
    if sweep is None:
        return ()
    results = []
    for run in index.of_sweep(sweep.id):
        folder = paths.run_dir(run.id)
        results.append(
            RunResult(
                id=run.id,
                params=run.params,
                status=run.status,
                attempt=run.attempt,
                summary=_summary(folder / "metrics.json"),
                curve=_json_lines(read_text(folder / "metrics.jsonl")),
                error=error_line(every_log(folder)),
            )
        )
    return tuple(results)


def every_log(folder: Path) -> str:
    """The run's logs, earlier attempts first (a rerun moves its last attempt's files to
    `attempt-N/`), so an error that made a rerun necessary is still found."""
    earlier = sorted(folder.glob("attempt-*/log"), key=lambda p: int(p.parent.name[8:] or 0))
    return "".join(read_text(log) for log in (*earlier, folder / "log"))
