"""`wild --runs`: each run with its status judged now (an ended run is never `running`), its
step, elapsed time, ETA and its objective's last value, from the kept summaries
(`wild.metrics.kept`), so 1,000 runs of 10,000 steps cost little more than 10."""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from wild.clock import duration_text, iso, parse_time
from wild.metrics.kept import encode, settled, summary_entries
from wild.parsers.early_stop import stopped_early_lines
from wild.parsers.metric_summary import RunSummary
from wild.parsers.runs import RunIndex, RunRecord, run_line
from wild.paths import WildPaths
from wild.runs.judge import judged
from wild.runs.resolve import value_text
from wild.runs.retry import DETERMINISTIC


def elapsed_s(run: RunRecord, now: datetime) -> float | None:
    """How long the run has run (until it ended, for an ended one)."""
    start = parse_time(run.started_at)
    end = parse_time(run.ended_at) if run.terminal else now
    return None if start is None or end is None else max(0.0, (end - start).total_seconds())


def eta_s(
    step: float | None,
    elapsed: float | None,
    total_steps: int | None,
    sibling_s: Sequence[float],
) -> float | None:
    """Seconds left for a running run: from its steps per second and its total steps, else
    from how long its finished siblings took; None when neither is known."""
    if elapsed is None:
        return None
    if total_steps is not None and step is not None and step > 0 and elapsed > 0:
        return max(0.0, (total_steps - step) / (step / elapsed))
    if sibling_s:
        return max(0.0, statistics.median(sibling_s) - elapsed)
    return None


def total_steps(summary: RunSummary | None, spec: Mapping[str, Any] | None) -> int | None:
    """The run's total steps: its sweep's `total_steps`, else what its files said."""
    declared = spec.get("total_steps") if spec is not None else None
    if isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
        return declared
    return summary.total_steps if summary is not None else None


def live_rows(
    paths: WildPaths, index: RunIndex, runs: Sequence[RunRecord], now: datetime
) -> list[tuple[RunRecord, RunSummary, float | None, float | None]]:
    """Each run judged now, with its summary, elapsed seconds and ETA."""
    return live_figures(paths, index, runs, now)[0]


def live_figures(
    paths: WildPaths, index: RunIndex, runs: Sequence[RunRecord], now: datetime
) -> tuple[list[tuple[RunRecord, RunSummary, float | None, float | None]], bool]:
    """`live_rows`, and whether every run's files had settled when read (`settled`): rows
    no later write of the same instant can change, which a listing may keep."""
    stamp = iso(now)
    current = [judged(paths, run, stamp) for run in runs]
    entries = summary_entries(paths, index, current)
    kept = {run_id: summary for run_id, (summary, _) in entries.items()}
    took: dict[str, list[float]] = {}
    for run in index.runs.values():
        if run.status == "finished" and (spent := elapsed_s(run, now)) is not None:
            took.setdefault(run.sweep, []).append(spent)
    out = []
    for run in current:
        summary = kept[run.id]
        spent = elapsed_s(run, now)
        sweep = index.sweeps.get(run.sweep)
        left = None
        if run.status == "running":
            total = total_steps(summary, sweep.spec if sweep is not None else None)
            left = eta_s(summary.step, spent, total, took.get(run.sweep, []))
        out.append((run, summary, spent, left))
    return out, all(settled(entry) for _, entry in entries.values())


def number_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def metrics_text(summary: RunSummary) -> str:
    """The objective's last value (with its best), else every metric's last value."""
    if summary.metric is not None:
        value = summary.value
        text = f"{summary.metric}={number_text(value)}"
        if summary.best is not None and summary.best != value:
            text += f" (best {number_text(summary.best)} @ {number_text(summary.best_step)})"
    else:
        text = " ".join(f"{k}={number_text(v)}" for k, v in summary.last.items()) or "-"
    return text + (" DIVERGED" if summary.diverged else "")


def limit_text(run: RunRecord) -> str:
    """The run's time limit as `--runs` shows it: `H:MM:SS`, or `none`."""
    if run.resources.time_s is None:
        return "none"
    minutes, seconds = divmod(round(run.resources.time_s), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


def format_live(
    rows: Sequence[tuple[RunRecord, RunSummary, float | None, float | None]],
    problems: Sequence[str],
    notes: Mapping[str, str] | None = None,
    repeated: Collection[str] = (),
) -> str:
    """The table `wild --runs` prints; `notes` say why a queued run waits, `repeated` names
    the deterministic failures (wild.runs.retry)."""
    notes = {**{r: DETERMINISTIC for r in repeated}, **(notes or {})}
    cells = [
        row_cells(run, summary, spent, left, notes.get(run.id))
        for run, summary, spent, left in rows
    ]
    early = [(run.id, run.status, run.reason) for run, *_ in rows]
    return table_text(cells, early, problems)


def row_cells(
    run: RunRecord,
    summary: RunSummary,
    spent: float | None,
    left: float | None,
    note: str | None,
) -> list[str]:
    """One run's cells in the table of `wild --runs`."""
    params = " ".join(f"{k}={value_text(v)}" for k, v in run.params.items()) or "-"
    return [
        run.id,
        run.status + (f" ({note})" if note is not None else ""),
        str(run.attempt),
        "-" if run.exit_code is None else str(run.exit_code),
        limit_text(run),
        "-" if summary.step is None else f"{summary.step:g}",
        duration_text(spent),
        duration_text(left),
        params,
        metrics_text(summary),
    ]


def table_text(
    cells: Sequence[Sequence[str]],
    early: Iterable[tuple[str, str, str | None]],
    problems: Sequence[str],
) -> str:
    """The table of rows of `row_cells`, the early-stopped runs (id, status, reason) and the
    problems, as `wild --runs` prints them."""
    if not cells:
        lines = ["No runs yet; start a sweep with `wild --sweep FILE`."]
    else:
        table: list[Sequence[str]] = [HEADS, *cells]
        columns = list(zip(*table, strict=True))
        # One format for every row (a str.format per row: 10,000 rows in a few ms).
        layout = "  ".join(f"{{:<{max(map(len, column))}}}" for column in columns[:9]) + "  {}"
        lines = [layout.format(*row) for row in table]
    return "\n".join([*lines, *tail_lines(early, problems)])


HEADS = ("ID", "STATUS", "ATTEMPT", "EXIT", "LIMIT", "STEP", "ELAPSED", "ETA", "PARAMS", "METRICS")


def tail_lines(early: Iterable[tuple[str, str, str | None]], problems: Sequence[str]) -> list[str]:
    """The lines after the table: the early-stopped runs, then the problems."""
    return [*stopped_early_lines(early), *(f"problem: {p}" for p in problems)]


def live_json(
    rows: Sequence[tuple[RunRecord, RunSummary, float | None, float | None]],
    notes: Mapping[str, str] | None = None,
    repeated: Collection[str] = (),
) -> list[dict[str, Any]]:
    """`wild --runs --json`: each run's record (status judged now) with its live figures,
    why a queued run waits (`waiting`, or null) and whether it is a deterministic failure."""
    notes = notes or {}
    return [
        {
            **run_line(run),
            "summary": encode(summary),
            "elapsed_s": spent,
            "eta_s": left,
            "waiting": notes.get(run.id),
            "deterministic_failure": run.id in repeated,
        }
        for run, summary, spent, left in rows
    ]
