"""Early stopping's driver (wild.runs.early_stopping) on real metric files: each check feeds
the rule only the lines appended since the last, a rewritten file or a rerun starts the
run's curve afresh, and a sweep with no run going is not read at all."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from tests.runs.helpers import BOUND_S, events, project, queue
from wild.clock import SystemClock
from wild.loop.runs_effect import LoopRuns
from wild.parsers.early_stop import SweepStopping
from wild.parsers.runs import RunIndex, RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.runs.early_stopping import EarlyStopping
from wild.store.events_log import EventLog
from wild.store.runs_log import append_records, read_runs

SPEC = {
    "name": "s",
    "base_command": "python t.py",
    "parameters": {"seed": [0, 1, 2]},
    "objective": {"metric": "loss"},
    "early_stop": {"min_steps": 2, "grace_runs": 2},
}


@pytest.fixture
def fed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every (run, number of points) the rules are fed."""
    calls: list[tuple[str, int]] = []
    real = SweepStopping.add

    def add(self: SweepStopping, run_id: str, points: Iterable[tuple[float, float]]) -> None:
        points = list(points)
        calls.append((run_id, len(points)))
        real(self, run_id, points)

    monkeypatch.setattr(SweepStopping, "add", add)
    return calls


def sweep(paths: WildPaths, statuses: Sequence[str], spec: Mapping[str, object] = SPEC) -> RunIndex:
    ids = tuple(f"s1-{n:03d}" for n in range(len(statuses)))
    runs = [
        RunRecord(run_id, "s1", {"seed": n}, "python t.py", status)  # type: ignore[arg-type]
        for n, (run_id, status) in enumerate(zip(ids, statuses, strict=True))
    ]
    append_records(paths.runs_log, [SweepRecord("s1", "s", spec, "active", ids), *runs])
    return index(paths)


def index(paths: WildPaths) -> RunIndex:
    return read_runs(paths.runs_log).index


def log(paths: WildPaths, run_id: str, losses: Sequence[float], start: int = 0) -> None:
    folder = paths.run_dir(run_id)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "metrics.jsonl").open("a") as out:
        for step, loss in enumerate(losses, start):
            out.write(json.dumps({"step": step, "loss": loss}) + "\n")


def test_a_check_feeds_only_the_lines_appended_since_the_last(
    tmp_path: Path, fed: list[tuple[str, int]]
) -> None:
    paths = project(tmp_path)
    runs = sweep(paths, ["running", "running", "running"])
    log(paths, "s1-000", [1.0] * 500)
    log(paths, "s1-001", [1.0] * 500)
    log(paths, "s1-002", [9.0, 9.0])
    stopping = EarlyStopping(paths)
    assert stopping.decide(runs) == []  # s1-002 is at step 1, before min_steps
    assert sorted(fed) == [("s1-000", 500), ("s1-001", 500), ("s1-002", 2)]
    fed.clear()
    log(paths, "s1-002", [9.0], start=2)  # one new line, of the last run only
    stops = stopping.decide(runs)
    assert sorted(fed) == [("s1-000", 0), ("s1-001", 0), ("s1-002", 1)]
    assert [s.reason for s in stops] == [
        "early stop: median rule at step 2: best loss 9 > median 1 of 2 other runs"
    ]
    fed.clear()
    assert stopping.decide(runs) == [] and sum(n for _, n in fed) == 0  # asked once


def test_a_rewritten_file_and_a_rerun_start_the_curve_afresh(
    tmp_path: Path, fed: list[tuple[str, int]]
) -> None:
    paths = project(tmp_path)
    runs = sweep(paths, ["running", "running", "running"])
    log(paths, "s1-000", [1.0] * 5)
    log(paths, "s1-001", [1.0] * 5)
    log(paths, "s1-002", [float("nan")])
    stopping = EarlyStopping(paths)
    assert [s.reason for s in stopping.decide(runs)] == ["diverged: loss nan at step 0"]
    # Its next attempt: the old files moved away (as wild.runs.attempts does), new lines.
    again = replace(runs.runs["s1-002"], attempt=2)
    append_records(paths.runs_log, [again])
    (paths.run_dir("s1-002") / "metrics.jsonl").unlink()
    log(paths, "s1-002", [1.0] * 5)
    assert stopping.decide(index(paths)) == []
    # s1-000's file rewritten from its start, now bad: only the new content counts.
    (paths.run_dir("s1-000") / "metrics.jsonl").unlink()
    log(paths, "s1-000", [7.0] * 5)
    assert [s.run_id for s in stopping.decide(index(paths))] == ["s1-000"]


def test_a_sweep_with_no_run_going_is_not_read(tmp_path: Path, fed: list[tuple[str, int]]) -> None:
    paths = project(tmp_path)
    runs = sweep(paths, ["finished", "stopped", "queued"])
    log(paths, "s1-000", [1.0] * 5)
    stopping = EarlyStopping(paths)
    assert stopping.decide(runs) == [] and fed == []
    assert not stopping.watching(runs)
    assert stopping.watching(sweep(paths, ["running"]))
    plain = sweep(paths, ["running"], {k: v for k, v in SPEC.items() if k != "early_stop"})
    assert not EarlyStopping(paths).watching(plain)


GOOD = (
    'for i in $(seq 0 29); do echo "{\\"step\\": $i, \\"loss\\": 1}" '
    '>> "$WILD_RUN_DIR/metrics.jsonl"; done'
)
# Bad from its first step, and it goes on (up to 3,000 steps: a bound) until stopped.
BAD = (
    'for i in $(seq 0 3000); do echo "{\\"step\\": $i, \\"loss\\": 5}" '
    '>> "$WILD_RUN_DIR/metrics.jsonl"; sleep 0.01; done'
)


def test_the_loops_runs_step_stops_a_bad_run_through_its_backend(tmp_path: Path) -> None:
    paths = project(tmp_path)
    ids = (*queue(paths, GOOD, 2), *queue(paths, BAD, 1, start=2))
    append_records(paths.runs_log, [SweepRecord("s1", "s", SPEC, "active", ids)])
    clock = SystemClock()
    runs = LoopRuns(
        paths,
        clock,
        EventLog(paths.events, clock),
        tag="test",
        settings={"run_slots": "3"},
        approval_required=lambda: False,
    )
    deadline = time.monotonic() + BOUND_S
    while runs.supervisor.busy() and time.monotonic() < deadline:
        runs.supervise()  # the loop's SuperviseRuns step
        time.sleep(0.05)
    ended = runs.supervisor.index.runs
    assert [ended[run_id].status for run_id in ids] == ["finished", "finished", "stopped"]
    assert (ended[ids[2]].reason or "").startswith("early stop: median rule at step "), ended
    stop = [e for e in events(paths, "run-stop") if e["run"] == ids[2]]
    assert stop and stop[0]["reason"] == ended[ids[2]].reason
