"""The runs of a sweep as a markdown table: what the analysis prompt and `wild --runs` show."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wild.parsers.runs import RunRecord


def run_table(runs: Sequence[RunRecord]) -> str:
    """The analysis prompt's table: id, params, status, attempts, exit code, final metrics."""
    head = "| run | params | status | attempts | exit code | final metrics |\n" + "|---" * 6 + "|"
    rows = [
        f"| {_cell(run.id)} | {_pairs(run.params)} | {run.status}{_why(run)} | {run.attempt} "
        f"| {'' if run.exit_code is None else run.exit_code} | {_pairs(run.metrics or {})} |"
        for run in runs
    ]
    return "\n".join([head, *rows])


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
