"""A full-scale project for the dashboard benchmark: 10k tasks, 1k runs, 100k alerts."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from wild.commands.init import init_wild
from wild.parsers.alerts import encode_alert, make_alert, status_update
from wild.parsers.runs import RunRecord, SweepRecord, encode_record
from wild.paths import WildPaths

T0 = datetime(2026, 11, 25, 8, 0, tzinfo=UTC)


def _alerts(paths: WildPaths, count: int, still_open: int) -> None:
    lines = []
    for n in range(count):
        at = T0 + timedelta(seconds=n)
        alert = make_alert(
            severity="warning",
            source=f"job-{n % 1000}",
            type="divergence",
            description=f"loss spiked at step {n}",
            choices=("rerun", "ignore"),
            now=at,
        )
        alert["id"] = f"alert-{n:06d}"
        lines.append(encode_alert(alert))
        if n >= still_open:
            lines.append(encode_alert(status_update(alert, "resolved", at)))
    paths.alerts.write_bytes(b"".join(lines))


def _runs(paths: WildPaths, count: int, steps: int) -> None:
    ids = tuple(f"s1-{n:04d}" for n in range(count))
    lines = [encode_record(SweepRecord("s1", "grid", {}, "active", run_ids=ids))]
    for n, run_id in enumerate(ids):
        status = "running" if n % 10 == 0 else "finished"
        lines.append(encode_record(RunRecord(run_id, "s1", {"lr": n}, "python t.py", status)))  # type: ignore[arg-type]
        folder = paths.run_dir(run_id)
        folder.mkdir(parents=True)
        rows = (
            {"step": s, "loss": 2 * math.exp(-s / (10 + n % 50)), "acc": s / steps}
            for s in range(steps)
        )
        (folder / "metrics.jsonl").write_bytes(
            b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in rows)
        )
    paths.runs_log.write_bytes(b"".join(lines))


def _events(paths: WildPaths, iterations: int) -> None:
    lines = []
    for n in range(1, iterations + 1):
        at = (T0 + timedelta(seconds=30 * n)).isoformat().replace("+00:00", "Z")
        start = {
            "id": f"s{n}",
            "ts": at,
            "kind": "agent-start",
            "cause": None,
            "iteration": n,
            "work_type": "task",
            "work_id": f"task-{n:05d}",
        }
        end = {
            "id": f"e{n}",
            "ts": at,
            "kind": "agent-end",
            "cause": f"s{n}",
            "iteration": n,
            "exit_code": 0,
            "timed_out": False,
            "cancelled": False,
            "duration_s": 20.0,
            "signals": ["TASK_COMPLETE"],
            "agent": "claude",
            "cost_usd": 0.05,
            "input_tokens": 9000,
            "output_tokens": 900,
            "is_error": False,
            "problems": [],
            "files_changed": ["train.py"],
            "log": f"/x/logs/iteration-{n}.log",
        }
        lines += [orjson.dumps(start), orjson.dumps(end)]
    paths.events.write_bytes(b"\n".join(lines) + b"\n")


def make_full_project(
    root: Path,
    *,
    tasks: int = 10_000,
    runs: int = 1_000,
    alerts: int = 100_000,
    open_alerts: int = 200,
    steps: int = 100,
    iterations: int = 1_000,
) -> WildPaths:
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    body = "".join(f"- [ ] [P2] task-{n:05d}: train variant {n}\n" for n in range(tasks))
    paths.tasks.write_text("# Tasks\n\n" + body)
    _alerts(paths, alerts, open_alerts)
    _runs(paths, runs, steps)
    _events(paths, iterations)
    return paths
