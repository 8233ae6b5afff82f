"""`wild --runs` live: the status judged now, step, elapsed, ETA and the objective's value."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from wild.cli import cli
from wild.commands.init import init_wild
from wild.commands.runs_table import eta_s, format_live, live_rows
from wild.commands.watch import watch_runs
from wild.liveness import probe
from wild.parsers.runs import RunRecord, RunStatus, SweepRecord, run_line, sweep_line
from wild.paths import WildPaths
from wild.runs.local import START_FIELD
from wild.store.runs_log import read_runs

NOW = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC)
SPEC = {"name": "s", "objective": {"metric": "val_loss", "mode": "min"}, "total_steps": 100}


def _project(tmp_path: Path, runs: list[RunRecord]) -> WildPaths:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    sweep = SweepRecord("s1", "s", SPEC, "active", tuple(r.id for r in runs))
    lines = [sweep_line(sweep), *(run_line(r) for r in runs)]
    paths.runs_log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    for run in runs:
        paths.run_dir(run.id).mkdir(parents=True, exist_ok=True)
    return paths


def _run(number: int, status: RunStatus, **fields: Any) -> RunRecord:
    run = RunRecord(f"s1-00{number}", "s1", {"lr": 0.1, "seed": number}, "true", status)
    return replace(run, started_at="2026-11-25T11:50:00Z", **fields)


def test_an_ended_run_is_never_shown_running(tmp_path: Path) -> None:
    # Before, --runs showed the runs.jsonl line: `running` until a loop looked again.
    paths = _project(tmp_path, [_run(1, "running", job_id=str(2**22 + 7))])
    (paths.run_dir("s1-001") / "exit").write_text(
        '{"run": "s1-001", "attempt": 1, "exit_code": 0, "ended_at": "2026-11-25T11:55:00Z"}'
    )
    index = read_runs(paths.runs_log).index
    ((run, _summary, spent, _left),) = live_rows(paths, index, list(index.runs.values()), NOW)
    assert (run.status, run.exit_code, spent) == ("finished", 0, 300.0)


def test_a_run_whose_wrapper_is_gone_is_shown_failed(tmp_path: Path) -> None:
    paths = _project(tmp_path, [_run(1, "running", job_id=str(2**22 + 7))])
    index = read_runs(paths.runs_log).index
    ((run, *_),) = live_rows(paths, index, list(index.runs.values()), NOW)
    assert run.status == "failed" and "lost" in (run.reason or "")


def test_a_live_run_shows_step_elapsed_eta_and_its_objective(tmp_path: Path) -> None:
    # This process stands in for the wrapper: it is alive, and its start time is recorded.
    seen = probe(os.getpid())
    assert seen is not None
    live = _run(1, "running", job_id=str(os.getpid()), raw={START_FIELD: seen.start_ticks})
    paths = _project(tmp_path, [live])
    (paths.run_dir("s1-001") / "metrics.jsonl").write_text(
        '{"step": 10, "val_loss": 0.5}\n{"step": 25, "val_loss": 0.75}\n'
    )
    index = read_runs(paths.runs_log).index
    index.runs["s1-001"] = live
    rows = live_rows(paths, index, list(index.runs.values()), NOW)
    ((run, summary, spent, left),) = rows
    assert run.status == "running" and summary.step == 25 and spent == 600.0
    assert left == 1800.0  # 75 steps to go at 25 steps per 600 s
    text = format_live(rows, [])
    assert "25    10m00s   30m00s" in text
    assert "val_loss=0.75 (best 0.5 @ 10)" in text


def test_eta_from_finished_siblings_without_total_steps() -> None:
    assert eta_s(5, 100.0, None, [400.0, 500.0, 600.0]) == 400.0
    assert eta_s(None, 100.0, None, []) is None


def test_cli_runs_json_carries_the_summary(tmp_path: Path) -> None:
    paths = _project(tmp_path, [_run(1, "finished", exit_code=0)])
    (paths.run_dir("s1-001") / "metrics.jsonl").write_text('{"step": 3, "val_loss": NaN}\n')
    result = CliRunner().invoke(cli, ["--dir", str(paths.root), "--runs", "--json"])
    (row,) = orjson.loads(result.output)
    assert row["summary"]["diverged"] is True and row["summary"]["last"] == {"val_loss": "nan"}
    text = CliRunner().invoke(cli, ["--dir", str(paths.root), "--runs"]).output
    assert "val_loss=nan DIVERGED" in text


def test_runs_watch_redraws_on_a_metric_file_event_not_a_timer(tmp_path: Path) -> None:
    paths = _project(tmp_path, [_run(1, "finished", exit_code=0)])
    shown: list[str] = []
    first = threading.Event()

    def show() -> None:
        shown.append(format_live(live_rows(paths, read_runs(paths.runs_log).index, [], NOW), []))
        first.set()

    watcher = threading.Thread(target=watch_runs, args=(paths, [], show), kwargs={"max_updates": 2})
    watcher.start()
    assert first.wait(10)
    time.sleep(0.3)  # quiet: no timer redraws
    assert len(shown) == 1
    (paths.run_dir("s1-001") / "metrics.jsonl").write_text('{"step": 1, "val_loss": 1}\n')
    watcher.join(10)
    assert not watcher.is_alive() and len(shown) == 2
