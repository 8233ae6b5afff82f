"""Recording a sweep: runs.jsonl lines, the barrier and the analysis task, or nothing."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir
from wild.errors import WildError
from wild.parsers import barriers as barriers_md
from wild.parsers import tasks as tasks_md
from wild.parsers.sweeps import SweepSpec, parse_sweep
from wild.paths import WildPaths
from wild.runs import record_sweep as record_sweep_module
from wild.runs.record_sweep import (
    TIME_LIMIT_ENV,
    choose_backend,
    new_sweep_id,
    record_sweep,
    run_ids,
)
from wild.store.runs_log import read_runs

NOW = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)


def spec(text: str) -> SweepSpec:
    parsed = parse_sweep(text)
    assert isinstance(parsed, SweepSpec), parsed
    return parsed


GRID = (
    '{"name": "g", "base_command": "python t.py", "max_runs": 3, '
    '"parameters": {"a": [1, 2], "b": ["x", "y"]}, "resources": {"time": "00:01:00"}}'
)


def test_a_sweep_is_recorded_with_queued_runs_a_barrier_and_its_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WILD_RUN_BACKEND", raising=False)
    paths = WildPaths(init_wild_dir(tmp_path))
    outcome = record_sweep(paths, spec(GRID), now=NOW)
    assert outcome.errors == () and outcome.sweep is not None
    sweep_id = outcome.sweep.id
    log = read_runs(paths.runs_log)
    sweep = log.index.sweeps[sweep_id]
    runs = log.index.of_sweep(sweep_id)
    assert [r.id for r in runs] == [f"{sweep_id}-001", f"{sweep_id}-002", f"{sweep_id}-003"]
    assert [r.resolved_instruction for r in runs] == [
        "python t.py --a=1 --b=x",
        "python t.py --a=1 --b=y",
        "python t.py --a=2 --b=x",
    ]
    assert {(r.status, r.backend, r.resources.time_s) for r in runs} == {("queued", "local", 60.0)}
    assert (sweep.cut, sweep.barrier, sweep.status) == (1, f"sweep-{sweep_id}-done", "active")
    barrier = barriers_md.find(
        barriers_md.parse(paths.barriers.read_text()), f"sweep-{sweep_id}-done"
    )
    assert barrier is not None and (barrier.type, barrier.status) == ("manual", "waiting")
    tasks = tasks_md.parse(paths.tasks.read_text()).tasks
    task = next(t for t in tasks if t.id == sweep.task)
    assert task.blocked_by == (f"sweep-{sweep_id}-done",)
    assert barrier.blocks == (task.id,)
    assert log.problems == []


def test_a_missing_skill_target_records_nothing(tmp_path: Path) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    text = (
        '{"name": "g", "skill": {"kind": "python_script", "target": "no.py"}, '
        '"parameters": {"a": [1]}}'
    )
    before = (paths.tasks.read_bytes(), paths.barriers.read_bytes())
    outcome = record_sweep(paths, spec(text), now=NOW)
    assert outcome.sweep is None
    assert outcome.errors == (
        f"\"skill.target\" 'no.py': no file {tmp_path}/no.py; reference an existing python "
        "script (relative to the workdir)",
    )
    assert not paths.runs_log.exists()
    assert (paths.tasks.read_bytes(), paths.barriers.read_bytes()) == before


def test_backend_order_and_ids() -> None:
    assert choose_backend("slurm", "local", "x") == "slurm"
    assert choose_backend(None, "pbs", "x") == "pbs"
    assert choose_backend(None, None, "x") == "x"
    assert choose_backend(None, None, "") == "local"
    assert new_sweep_id(NOW, "1a2b", {}) == "s20261125-1a2b"
    assert new_sweep_id(NOW, "1a2b", {"s20261125-1a2b": 1}) is None
    assert run_ids("s", 2) == ("s-001", "s-002")
    assert run_ids("s", 1000)[-1] == "s-1000" and run_ids("s", 1000)[0] == "s-0001"


def test_a_sweep_refused_by_a_read_only_tasks_md_queues_nothing_and_its_retry_runs_once(
    tmp_path: Path,
) -> None:
    """Issue 20 item 15: `wild --sweep` exits 1 on a read-only tasks.md and leaves no run
    queued, so the obvious retry queues every grid point once."""
    paths = WildPaths(init_wild_dir(tmp_path))
    env = {**os.environ, "WILD_DIR": str(paths.root)}
    command = [sys.executable, "-m", "wild", "--sweep", "-"]

    def sweep() -> subprocess.CompletedProcess[bytes]:
        grid = GRID.encode()
        return subprocess.run(
            command, input=grid, env=env, capture_output=True, check=False, timeout=60
        )

    before = paths.barriers.read_bytes()
    paths.tasks.chmod(0o444)
    failed = sweep()
    assert failed.returncode == 1, failed.stderr
    assert b"read-only" in failed.stderr
    assert not paths.runs_log.exists() or read_runs(paths.runs_log).index.runs == {}
    assert paths.barriers.read_bytes() == before
    paths.tasks.chmod(0o644)
    again = sweep()
    assert again.returncode == 0, again.stderr
    runs = read_runs(paths.runs_log).index.runs.values()
    assert sorted(r.resolved_instruction for r in runs) == [
        "python t.py --a=1 --b=x",
        "python t.py --a=1 --b=y",
        "python t.py --a=2 --b=x",
    ]


def test_a_failed_runs_append_takes_the_task_and_barrier_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    before = (paths.tasks.read_bytes(), paths.barriers.read_bytes())

    def full_disk(_path: Path, _records: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(record_sweep_module, "append_records", full_disk)
    with pytest.raises(OSError, match="No space"):
        record_sweep(paths, spec(GRID), now=NOW)
    assert (paths.tasks.read_bytes(), paths.barriers.read_bytes()) == before
    assert not paths.runs_log.exists()


def test_a_run_without_a_time_gets_the_default_limit_on_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    untimed = '{"name": "u", "base_command": "true", "parameters": {"a": [1]}}'
    monkeypatch.delenv(TIME_LIMIT_ENV, raising=False)
    first = record_sweep(paths, spec(untimed), now=NOW)
    monkeypatch.setenv(TIME_LIMIT_ENV, "90m")
    second = record_sweep(paths, spec(untimed), now=NOW)
    timed = record_sweep(paths, spec(GRID), now=NOW)  # the sweep's own time wins
    assert [r.resources.time_s for r in (*first.runs, *second.runs)] == [86400.0, 5400.0]
    assert {r.resources.time_s for r in timed.runs} == {60.0}
    monkeypatch.setenv(TIME_LIMIT_ENV, "soon")
    with pytest.raises(WildError, match="WILD_RUN_TIME_LIMIT='soon' is not a duration"):
        record_sweep(paths, spec(untimed), now=NOW)


def test_a_drawn_id_already_taken_is_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    draws = iter(["aaaa", "aaaa", "bbbb"])
    monkeypatch.setattr(secrets, "token_hex", lambda _n: next(draws))
    first = record_sweep(paths, spec(GRID), now=NOW).sweep
    second = record_sweep(paths, spec(GRID), now=NOW).sweep
    assert (first and first.id, second and second.id) == ("s20261125-aaaa", "s20261125-bbbb")


def test_a_big_sweep_is_recorded_without_all_its_records_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Recording a 10,000-run sweep held its planned runs, their signed copies and their
    # encoded lines together (~5 times runs.jsonl's size); now each run is planned, signed
    # and encoded as the one append is built, the grid's points made from their index as
    # they are asked for, and the append's buffer written as it is (not copied to bytes):
    # what is held is about the append's bytes (2.5 times them before those last two).
    monkeypatch.delenv("WILD_RUN_BACKEND", raising=False)
    paths = WildPaths(init_wild_dir(tmp_path))
    text = '{"name": "big", "base_command": "python t.py", "parameters": {"i": %s}}'
    big = spec(text % list(range(2000)))
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        outcome = record_sweep(paths, big, now=NOW)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.sweep is not None and len(outcome.runs) == 2000
    runs = read_runs(paths.runs_log).index.of_sweep(outcome.sweep.id)
    assert [r.resolved_instruction for r in runs[:2]] == ["python t.py --i=0", "python t.py --i=1"]
    assert [r.raw["signature"] for r in runs] == [r.raw["signature"] for r in outcome.runs]
    assert peak - start <= 1.5 * paths.runs_log.stat().st_size
