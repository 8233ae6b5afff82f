"""Iterations, stats, health strip and task burndown, read from events.log's agent lines.

Each iteration is an `agent-start` line and the `agent-end` line that names it as its cause
(`wild.loop.driver`); the fields of the end line are `wild.loop.iteration.record_fields`
plus `files_changed` when the loop records it. Pure: events in, plain data out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# The promises that mean an iteration finished its work (the rest are partial or failed).
DONE_SIGNALS = frozenset(
    {"TASK_COMPLETE", "COMPLETE", "ALERT_RESOLVED", "HUMAN_INPUT_PROCESSED", "MONITORING_COMPLETE"}
)
HEALTH_LAST = 50  # the health strip shows this many of the latest iterations


def outcome(end: Mapping[str, Any]) -> str:
    """One word for how an iteration ended: done, partial, failed, timed out or stopped."""
    if end.get("cancelled"):
        return "stopped"
    if end.get("timed_out"):
        return "timed out"
    if end.get("is_error") or end.get("exit_code") not in (0, None):
        return "failed"
    signals = end.get("signals")
    if isinstance(signals, list) and DONE_SIGNALS.intersection(map(str, signals)):
        return "done"
    return "partial"


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _tokens(end: Mapping[str, Any]) -> float | None:
    counts = [_number(end.get(key)) for key in ("input_tokens", "output_tokens")]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def _files(end: Mapping[str, Any]) -> list[str] | None:
    files = end.get("files_changed")
    if isinstance(files, list):
        return [str(f) for f in files]
    if isinstance(files, int) and not isinstance(files, bool):
        return [f"{files} files"]
    return None


def iterations(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per agent run, oldest first; a run still going has outcome `running`."""
    starts: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for event in events:
        kind = event.get("kind")
        if kind == "agent-start":
            row: dict[str, Any] = {
                "iteration": event.get("iteration"),
                "workType": event.get("work_type"),
                "work": event.get("work_id"),
                "startedAt": event.get("ts"),
                "outcome": "running",
                "agent": None,
                "durationS": None,
                "tokens": None,
                "costUsd": None,
                "filesChanged": None,
                "log": None,
                "problems": [],
            }
            starts[str(event.get("id"))] = row
            rows.append(row)
        elif kind == "agent-end":
            row = starts.pop(str(event.get("cause")), {})
            if not row:  # its start line was lost (torn, compacted): keep what we know
                row = {"iteration": event.get("iteration"), "work": None, "workType": None}
                row["startedAt"] = None
                rows.append(row)
            problems = event.get("problems")
            row.update(
                outcome=outcome(event),
                agent=event.get("agent"),
                model=event.get("model"),
                durationS=_number(event.get("duration_s")),
                tokens=_tokens(event),
                costUsd=_number(event.get("cost_usd")),
                filesChanged=_files(event),
                log=event.get("log") if isinstance(event.get("log"), str) else None,
                endedAt=event.get("ts"),
                exitCode=event.get("exit_code"),
                signals=event.get("signals") if isinstance(event.get("signals"), list) else [],
                problems=[str(p) for p in problems] if isinstance(problems, list) else [],
            )
    # A start with no end whose loop is gone would say "running" forever; the newest one may
    # really be running, the older ones were interrupted.
    for row in rows[:-1]:
        if row["outcome"] == "running":
            row["outcome"] = "interrupted"
    return rows


def stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The stats line: iterations, success rate, cost, tokens and errors."""
    ended = [r for r in rows if r["outcome"] not in ("running",)]
    done = sum(1 for r in ended if r["outcome"] == "done")
    errors = sum(1 for r in ended if r["outcome"] in ("failed", "timed out", "interrupted"))
    return {
        "iterations": len(rows),
        "successRate": done / len(ended) if ended else None,
        "costUsd": sum(r["costUsd"] or 0.0 for r in rows),
        "tokens": sum(r["tokens"] or 0.0 for r in rows),
        "errors": errors,
    }


def health(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The latest iterations as (number, outcome) cells for the health strip."""
    return [{"iteration": r["iteration"], "outcome": r["outcome"]} for r in rows[-HEALTH_LAST:]]


def burndown(
    events: Iterable[Mapping[str, Any]], rows: list[dict[str, Any]], open_now: int, now: str
) -> list[dict[str, Any]]:
    """Open tasks over time as a step line, reconstructed backwards from the count open now.

    A task iteration that ended `done` closed one task; a `task-added` line opened one. The
    count before the first change is the count now minus every change, so the line ends at
    the real count whatever happened before the log began (tasks added by hand or by the CLI
    show up in that starting count). `now` must sort after every event time (ISO, ms).
    """
    changes: list[tuple[str, int]] = [
        (str(r.get("endedAt")), -1)
        for r in rows
        if r.get("workType") == "task" and r["outcome"] == "done" and r.get("endedAt")
    ]
    changes += [
        (str(e.get("ts")), +1) for e in events if e.get("kind") == "task-added" and e.get("ts")
    ]
    changes.sort()
    count = open_now - sum(delta for _, delta in changes)
    points: list[dict[str, Any]] = []
    for at, delta in changes:
        points.append({"at": at, "open": max(count, 0)})
        count += delta
        points.append({"at": at, "open": max(count, 0)})
    points.append({"at": max(now, changes[-1][0]) if changes else now, "open": open_now})
    return points
