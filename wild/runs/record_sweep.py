"""Recording a validated sweep: its runs in runs.jsonl, its barrier and its analysis task.

The decisions (the sweep id, the backend, every run's line) are pure functions; the effect
`record_sweep` records a sweep all or nothing. It checks the skill target and that wild may
write every file it will touch, then writes the analysis task to tasks.md (blocked by
`sweep-<id>-done`; the id is drawn under wild's lock in that same edit, so the task reserves
it), the manual barrier to barriers.md, and last one append to runs.jsonl holding the sweep
line and all its `queued` run lines, each signed (wild.runs.signing) with its
`resolved_instruction`. That append is the commit point: a failure before it takes the task
and barrier back, so a failed `wild --sweep` leaves no run queued and its retry runs each
grid point once. wild satisfies the barrier when every run is terminal and their alerts are
resolved (SPEC §7, seed 000's double guard).

A run whose sweep gives no `resources.time` gets the default time limit
(`WILD_RUN_TIME_LIMIT`, else 24 hours), written on its line, so no run can hang forever.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import overload

from wild.clock import iso
from wild.errors import WildError
from wild.parsers import barriers as barriers_md
from wild.parsers import tasks as tasks_md
from wild.parsers.runs import RunRecord, SweepRecord
from wild.parsers.sweeps import SweepSpec, parse_run_time
from wild.paths import WildPaths
from wild.record import record, replace
from wild.runs import signing
from wild.runs.resolve import program, resolve_instruction
from wild.runs.skill_targets import target_problems
from wild.store.files import update_text
from wild.store.runs_log import append_records, read_runs
from wild.store.write_guard import check_appendable, check_writable

DEFAULT_BACKEND = "local"
BACKEND_ENV = "WILD_RUN_BACKEND"
TIME_LIMIT_ENV = "WILD_RUN_TIME_LIMIT"
DEFAULT_TIME_LIMIT_S = 24 * 3600.0


@record
class SweepOutcome:
    """A recorded sweep, or the errors that kept it from being recorded (nothing launched)."""

    sweep: SweepRecord | None
    runs: Sequence[RunRecord] = ()  # made as they are asked for (`Planned`)
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


class TimeLimitError(WildError):
    """`WILD_RUN_TIME_LIMIT` is not a duration: no sweep is recorded until it is fixed."""


def time_limit_s(env_value: str | None) -> float:
    """The default time limit of a run whose sweep gives none: `WILD_RUN_TIME_LIMIT` (a
    duration as `resources.time` takes it: "HH:MM:SS", "90m", seconds), else 24 hours."""
    if env_value is None or not env_value.strip():
        return DEFAULT_TIME_LIMIT_S
    seconds = parse_run_time(env_value.strip())
    if seconds is None:
        raise TimeLimitError(
            f'{TIME_LIMIT_ENV}={env_value!r} is not a duration: write "HH:MM:SS", "90m" '
            "or a number of seconds"
        )
    return seconds


class Planned(Sequence[RunRecord]):
    """A sweep's runs, each made when it is asked for (`make(i)`), never all at once: a
    10,000-run sweep's records, its signed copies and their lines were tens of MB held
    together while it was recorded."""

    def __init__(self, make: Callable[[int], RunRecord], count: int) -> None:
        self._make, self._count = make, count

    @overload
    def __getitem__(self, at: int) -> RunRecord: ...

    @overload
    def __getitem__(self, at: slice) -> Sequence[RunRecord]: ...

    def __getitem__(self, at: int | slice) -> RunRecord | Sequence[RunRecord]:
        if isinstance(at, slice):
            return tuple(self._make(i) for i in range(*at.indices(self._count)))
        if not -self._count <= at < self._count:
            raise IndexError(at)
        return self._make(at % self._count)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[RunRecord]:
        return (self._make(i) for i in range(self._count))


def plan_sweep(
    spec: SweepSpec,
    *,
    sweep_id: str,
    created_at: str,
    backend: str,
    python: str,
    default_time_s: float = DEFAULT_TIME_LIMIT_S,
) -> tuple[SweepRecord, Sequence[RunRecord]]:
    """The sweep's line and its runs' `queued` lines (unsigned, made as they are asked
    for), each with its resolved instruction, the sweep's program, and a time limit (the
    sweep's, else `default_time_s`)."""
    grid = spec.grid()
    ids = run_ids(sweep_id, len(grid.points))
    command = program(spec, python=python)
    resources = spec.resources
    if resources.time_s is None:
        resources = replace(resources, time_s=default_time_s)

    def make(at: int) -> RunRecord:
        params = grid.points[at]
        return signing.with_command(
            RunRecord(
                id=ids[at],
                sweep=sweep_id,
                params=params,
                resolved_instruction=resolve_instruction(spec, params, python=python),
                status="queued",
                backend=backend,
                workdir=spec.workdir,
                resources=resources,
                queued_at=created_at,
            ),
            command,
            spec.raw.get("slurm"),
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
        raw={"backend": backend, "grid_size": grid.total, signing.COMMAND_FIELD: command},
    )
    return sweep, Planned(make, len(ids))


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


def _taken(paths: WildPaths, tasks_text: str) -> set[str]:
    """Sweep ids in use: those in runs.jsonl, and those an analysis task names (a sweep being
    recorded now, whose runs are not appended yet)."""
    taken = set(read_runs(paths.runs_log).index.sweeps)
    for task in tasks_md.parse(tasks_text).tasks:
        for blocker in task.blocked_by:
            if blocker.startswith("sweep-") and blocker.endswith("-done"):
                taken.add(blocker[len("sweep-") : -len("-done")])
    return taken


def _fresh_id(now: datetime, taken: set[str]) -> str:
    while (sweep_id := new_sweep_id(now, secrets.token_hex(2), dict.fromkeys(taken))) is None:
        pass
    return sweep_id


def _take_back(paths: WildPaths, path: Path, before: str, after: str) -> None:
    """Undo one of our edits if the file is still as we left it (a human's later save stays)."""
    with contextlib.suppress(WildError, OSError):
        update_text(path, lambda current: before if current == after else current, paths.lock)


def record_sweep(
    paths: WildPaths, spec: SweepSpec, *, now: datetime, run_backend: str | None = None
) -> SweepOutcome:
    """Check the spec's targets and every file, then record the analysis task, the barrier
    and last the sweep with its runs (the commit point); all or nothing."""
    problems = target_problems(spec, paths.project)
    if problems:
        return SweepOutcome(None, errors=tuple(problems))
    default_time_s = time_limit_s(os.environ.get(TIME_LIMIT_ENV))
    check_writable(paths.tasks)
    check_writable(paths.barriers)
    check_appendable(paths.runs_log)
    key = signing.load_key()
    backend = choose_backend(spec.backend, run_backend, os.environ.get(BACKEND_ENV))
    planned: list[tuple[SweepRecord, Sequence[RunRecord], str, str]] = []

    def add_task(current: str) -> str:
        # Under wild's lock (update_text's): the id drawn here is reserved by the task.
        sweep, runs = plan_sweep(
            spec,
            sweep_id=_fresh_id(now, _taken(paths, current)),
            created_at=iso(now),
            backend=backend,
            python=sys.executable,
            default_time_s=default_time_s,
        )
        text, task_id = tasks_md.add_task(
            current, analysis_task_text(sweep), blocked_by=(barrier_id(sweep.id),)
        )
        planned[:] = [(replace(sweep, task=task_id), runs, current, text)]
        return text

    update_text(paths.tasks, add_task, paths.lock)
    sweep, runs, tasks_before, tasks_after = planned[0]
    written = [(paths.tasks, tasks_before, tasks_after)]
    fields = barrier_fields(sweep, sweep.task or "")
    barriers_before = [""]

    def add_barrier(current: str) -> str:
        barriers_before[0] = current
        return barriers_md.add_barrier(current, barrier_id(sweep.id), fields)

    try:
        after = update_text(paths.barriers, add_barrier, paths.lock)
        written.append((paths.barriers, barriers_before[0], after))
        signed = Planned(lambda at: signing.sign(key, runs[at]), len(runs))
        append_records(paths.runs_log, itertools.chain([sweep], signed))  # the commit point
    except BaseException:
        for path, old, new in reversed(written):
            _take_back(paths, path, old, new)
        raise
    return SweepOutcome(sweep, signed)
