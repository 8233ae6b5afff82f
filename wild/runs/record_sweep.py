"""Recording a validated sweep: its runs in runs.jsonl, its barrier and its analysis task.

The decisions (the sweep id, the backend, every run's line) are pure functions; the effect
`record_sweep` checks that the skill target exists, then writes in an order a crash cannot
turn into a launched run without a record: one append (under wild's lock, with the id drawn)
holds the sweep line and all its `queued` run lines, each with its `resolved_instruction`;
then `finish_recording` (idempotent, so it also completes a sweep cut short by a crash) adds
the analysis task to tasks.md (blocked by `sweep-<id>-done`), the manual barrier to
barriers.md, and a second sweep line naming the task. wild satisfies the barrier when every
run is terminal and their alerts are resolved (SPEC §7, seed 000's double guard).
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from wild.clock import iso
from wild.parsers import barriers as barriers_md
from wild.parsers import tasks as tasks_md
from wild.parsers.runs import RunRecord, SweepRecord
from wild.parsers.sweeps import SweepSpec
from wild.paths import WildPaths
from wild.runs.resolve import resolve_instruction
from wild.runs.skill_targets import target_problems
from wild.store.files import update_text, wild_lock
from wild.store.runs_log import append_records, read_runs

DEFAULT_BACKEND = "local"
BACKEND_ENV = "WILD_RUN_BACKEND"


@dataclass(frozen=True)
class SweepOutcome:
    """A recorded sweep, or the errors that kept it from being recorded (nothing launched)."""

    sweep: SweepRecord | None
    runs: tuple[RunRecord, ...] = ()
    errors: tuple[str, ...] = ()


def choose_backend(spec_backend: str | None, flag: str | None, env_value: str | None) -> str:
    """SPEC §7: the sweep's `backend`, else `--run-backend`, else WILD_RUN_BACKEND, else local."""
    for choice in (spec_backend, flag, env_value):
        if choice and choice.strip():
            return choice.strip()
    return DEFAULT_BACKEND


def new_sweep_id(now: datetime, token: str, taken: Mapping[str, object]) -> str | None:
    """`s<YYYYMMDD>-<token>`, or None when that id is taken (draw another token)."""
    candidate = f"s{now.strftime('%Y%m%d')}-{token}"
    return None if candidate in taken else candidate


def barrier_id(sweep_id: str) -> str:
    return f"sweep-{sweep_id}-done"


def run_ids(sweep_id: str, count: int) -> tuple[str, ...]:
    """`<sweep id>-001` …, all of one width (at least 3 digits) so they sort in grid order."""
    width = max(3, len(str(count)))
    return tuple(f"{sweep_id}-{n:0{width}d}" for n in range(1, count + 1))


def plan_sweep(
    spec: SweepSpec, *, sweep_id: str, created_at: str, backend: str, python: str
) -> tuple[SweepRecord, tuple[RunRecord, ...]]:
    """The sweep's line and its runs' `queued` lines, each with its resolved instruction."""
    grid = spec.grid()
    ids = run_ids(sweep_id, len(grid.points))
    runs = tuple(
        RunRecord(
            id=run_id,
            sweep=sweep_id,
            params=params,
            resolved_instruction=resolve_instruction(spec, params, python=python),
            status="queued",
            backend=backend,
            workdir=spec.workdir,
            resources=spec.resources,
            queued_at=created_at,
        )
        for run_id, params in zip(ids, grid.points, strict=True)
    )
    sweep = SweepRecord(
        id=sweep_id,
        name=spec.name,
        spec=spec.raw,
        status="active",
        run_ids=ids,
        cut=grid.cut,
        created_at=created_at,
        barrier=barrier_id(sweep_id),
        raw={"backend": backend, "grid_size": grid.total},
    )
    return sweep, runs


def analysis_task_text(sweep: SweepRecord) -> str:
    return (
        f"Analyze sweep {sweep.id} ({sweep.name}): compare its runs' metrics "
        "(wild --runs --sweep " + sweep.id + ") and answer CONTINUE, COMPLETE or NEEDS_HUMAN"
    )


def barrier_fields(sweep: SweepRecord, task_id: str) -> list[tuple[str, str]]:
    return [
        ("Type", "manual"),
        (
            "Description",
            f"wild satisfies this when every run of sweep {sweep.id} is finished, failed or "
            "stopped and their alerts are resolved",
        ),
        ("Created", sweep.created_at or ""),
        ("Blocks", task_id),
    ]


def _fresh_id(paths: WildPaths, now: datetime) -> str:
    taken = read_runs(paths.runs_log).index.sweeps
    while (sweep_id := new_sweep_id(now, secrets.token_hex(2), taken)) is None:
        pass
    return sweep_id


def _analysis_task(current: str, sweep: SweepRecord) -> tuple[str, str]:
    """tasks.md with the sweep's analysis task, and its id; a task already blocked by the
    sweep's barrier (added before a crash) is the one, so it is never added twice."""
    barrier = barrier_id(sweep.id)
    for task in tasks_md.parse(current).tasks:
        if barrier in task.blocked_by and task.id:
            return current, task.id
    return tasks_md.add_task(current, analysis_task_text(sweep), blocked_by=(barrier,))


def finish_recording(paths: WildPaths, sweep: SweepRecord) -> SweepRecord:
    """Add the sweep's analysis task and barrier, and the sweep line naming the task.

    Idempotent: after a crash between the runs' append and here (a sweep line whose `task` is
    None), calling it again completes the sweep without a second task or barrier.
    """
    task_id = ""

    def add_task(current: str) -> str:
        nonlocal task_id
        text, task_id = _analysis_task(current, sweep)
        return text

    update_text(paths.tasks, add_task, paths.lock)
    fields = barrier_fields(sweep, task_id)
    update_text(
        paths.barriers,
        lambda current: barriers_md.add_barrier(current, barrier_id(sweep.id), fields),
        paths.lock,
    )
    done = replace(sweep, task=task_id)
    append_records(paths.runs_log, [done])
    return done


def record_sweep(
    paths: WildPaths, spec: SweepSpec, *, now: datetime, run_backend: str | None = None
) -> SweepOutcome:
    """Check the spec's targets, then record the sweep, its runs, barrier and analysis task."""
    problems = target_problems(spec, paths.project)
    if problems:
        return SweepOutcome(None, errors=tuple(problems))
    # Under wild's lock, so two sweeps recorded at once never draw the same id.
    with wild_lock(paths.lock):
        sweep, runs = plan_sweep(
            spec,
            sweep_id=_fresh_id(paths, now),
            created_at=iso(now),
            backend=choose_backend(spec.backend, run_backend, os.environ.get(BACKEND_ENV)),
            python=sys.executable,
        )
        append_records(paths.runs_log, [sweep, *runs])
    sweep = finish_recording(paths, sweep)
    return SweepOutcome(sweep, runs)
