"""The runs of a sweep as a markdown table: what the analysis prompt and `wild --runs` show."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wild.parsers.metric_summary import RunSummary
from wild.parsers.runs import RunRecord


def run_table(runs: Sequence[RunRecord], summaries: Mapping[str, RunSummary] | None = None) -> str:
    """The analysis prompt's table: id, params, status, attempts, exit code, final metrics
    (from each run's summary when given: its metric files, NaN shown; else its line's)."""
    head = "| run | params | status | attempts | exit code | final metrics |\n" + "|---" * 6 + "|"
    rows = [
        f"| {_cell(run.id)} | {_pairs(run.params)} | {run.status}{_why(run)} | {run.attempt} "
        f"| {'' if run.exit_code is None else run.exit_code} | {_final(run, summaries)} |"
        for run in runs
    ]
    return "\n".join([head, *rows])


def _final(run: RunRecord, summaries: Mapping[str, RunSummary] | None) -> str:
    summary = (summaries or {}).get(run.id)
    if summary is None:
        return _pairs(run.metrics or {})
    text = _pairs(summary.last)
    if summary.metric is not None and summary.best is not None:
        best = f"{_cell(summary.metric)}={_short(summary.best)}"
        text += f"; best {best} at step {_short(summary.best_step)}"
    return text + ("; DIVERGED (NaN or inf)" if summary.diverged else "")


def _why(run: RunRecord) -> str:
    return f" ({_short(run.reason)})" if run.reason and run.status != "finished" else ""


def _pairs(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{_cell(key)}={_short(value)}" for key, value in values.items()) or "—"


def _cell(text: str) -> str:
    """Text from a file as one table cell: no line break, no column break."""
    return " ".join(text.replace("|", "\\|").split())


def _short(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    text = _cell(str(value))
    return text if len(text) <= 40 else text[:39] + "…"
