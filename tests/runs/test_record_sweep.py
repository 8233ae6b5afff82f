"""Recording a sweep: runs.jsonl lines, the barrier and the analysis task, or nothing."""

from __future__ import annotations

import dataclasses
import secrets
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir
from wild.parsers import barriers as barriers_md
from wild.parsers import tasks as tasks_md
from wild.parsers.sweeps import SweepSpec, parse_sweep
from wild.paths import WildPaths
from wild.runs.record_sweep import (
    choose_backend,
    finish_recording,
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


def test_finishing_again_after_a_crash_adds_no_second_task_or_barrier(tmp_path: Path) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    sweep = record_sweep(paths, spec(GRID), now=NOW).sweep
    assert sweep is not None and sweep.task is not None
    tasks_before, barriers_before = paths.tasks.read_bytes(), paths.barriers.read_bytes()
    # As if the loop died after the runs' append: the sweep line without its task.
    again = finish_recording(paths, dataclasses.replace(sweep, task=None))
    assert again.task == sweep.task
    assert (paths.tasks.read_bytes(), paths.barriers.read_bytes()) == (
        tasks_before,
        barriers_before,
    )
    assert read_runs(paths.runs_log).index.sweeps[sweep.id].task == sweep.task


def test_a_drawn_id_already_taken_is_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    draws = iter(["aaaa", "aaaa", "bbbb"])
    monkeypatch.setattr(secrets, "token_hex", lambda _n: next(draws))
    first = record_sweep(paths, spec(GRID), now=NOW).sweep
    second = record_sweep(paths, spec(GRID), now=NOW).sweep
    assert (first and first.id, second and second.id) == ("s20261125-aaaa", "s20261125-bbbb")
