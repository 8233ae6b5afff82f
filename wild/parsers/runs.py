"""runs.jsonl as text: sweep and run records, one JSON object per line, the latest per id wins.

The file is append-only like alerts.jsonl (SPEC §7): a change to a run is a new line with the
same id, so a crash between two writes leaves the older, still valid, state. Every line has
`"kind": "sweep"` or `"kind": "run"`. Unknown fields are kept in `raw` and written back
unchanged by `updated`, so a newer wild's fields survive an older one's update.

This module is the contract shared by sweeps (wild.runs.sweeps), the backends
(wild.runs.backend and its plug-ins) and the loop; reading and appending the file is
`wild.store.runs_log`.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import field
from typing import Any, Literal, TypeGuard, get_args

import orjson

from wild.parsers.jsonl import loads
from wild.parsers.lines import Problem
from wild.record import record as frozen_record

FILE = "runs.jsonl"

RunStatus = Literal["planned", "queued", "running", "finished", "failed", "stopped"]
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
TERMINAL: frozenset[RunStatus] = frozenset({"finished", "failed", "stopped"})
SweepStatus = Literal["active", "stopped", "done"]
SWEEP_STATUSES: tuple[SweepStatus, ...] = get_args(SweepStatus)


@frozen_record(slots=True)
class Resources:
    """What one run needs from a backend (SPEC §7 `resources`); `time_s` None: no limit."""

    cpus: int = 1
    gpus: float = 0  # whole GPUs (0, 1, 2, …) or a share of one (0 < gpus < 1)
    memory_gb: float | None = None
    time_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "cpus": self.cpus,
            "gpus": self.gpus,
            "memory_gb": self.memory_gb,
            "time_s": self.time_s,
        }

    @classmethod
    def from_json(cls, value: object) -> Resources:
        if not isinstance(value, Mapping):
            return cls()
        cpus, gpus = value.get("cpus", 1), value.get("gpus", 0)
        memory, time_s = value.get("memory_gb"), value.get("time_s")
        return cls(
            cpus=cpus if _count(cpus) and cpus >= 1 else 1,
            gpus=gpus if is_gpu_request(gpus) else 0,
            memory_gb=float(memory) if _number(memory) else None,
            time_s=float(time_s) if _number(time_s) else None,
        )


@frozen_record(slots=True)
class RunRecord:
    """A run's state as its latest line gives it.

    `id` is `<sweep id>-<index, 3 digits>` (e.g. `s20261125-1a2b-007`); a rerun keeps the id
    and counts `attempt` up. `resolved_instruction` is the exact shell command the backend
    runs (in `workdir`, relative to the project); it is written before the run may be queued.
    `job_id` is the backend's handle: a process group id for `local`, a job id for `slurm`.
    `reason` says why a run ended as it did when the exit code cannot (`lost`, `timeout`,
    `stopped by the human`, `stop_sweep`, …).
    """

    id: str
    sweep: str
    params: Mapping[str, Any]
    resolved_instruction: str
    status: RunStatus
    backend: str = "local"
    workdir: str = "."
    resources: Resources = field(default_factory=Resources)
    attempt: int = 1
    job_id: str | None = None
    host: str | None = None
    exit_code: int | None = None
    reason: str | None = None
    queued_at: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    metrics: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)
    line: int = 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


@frozen_record(slots=True)
class SweepRecord:
    """A sweep as its latest line gives it: the spec as given, and what came of it.

    `run_ids` lists the runs in grid order; `cut` counts the grid points `max_runs` left out.
    `barrier` is `sweep-<id>-done`, `task` the analysis task blocked by it.
    """

    id: str
    name: str
    spec: Mapping[str, Any]
    status: SweepStatus
    run_ids: tuple[str, ...] = ()
    cut: int = 0
    created_at: str | None = None
    barrier: str | None = None
    task: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)
    line: int = 0


Record = RunRecord | SweepRecord


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_gpu_request(value: object) -> TypeGuard[int | float]:
    """Whole GPUs (a whole number, at least 0) or a share of one GPU (0 < value < 1)."""
    return _count(value) or (_number(value) and 0 < value < 1)


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


# A run line's fields whose values repeat from run to run (the sweep's id and program, the
# status, the backend, …): one string each, not one per record, in a reader that holds
# thousands of records (the loop's index of a 10,000-run sweep).
_SHARED_VALUES = frozenset(
    {"kind", "sweep", "status", "backend", "workdir", "command", "host", "reason"}
)


def _shared(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The line's object with its repeating string values interned (equal, so the same)."""
    return {
        key: sys.intern(value) if key in _SHARED_VALUES and type(value) is str else value
        for key, value in obj.items()
    }


def _run(obj: Mapping[str, Any], line_no: int) -> RunRecord | str:
    status, sweep = obj.get("status"), obj.get("sweep")
    if status not in RUN_STATUSES:
        return f'unknown run "status" {status!r}; use one of {", ".join(RUN_STATUSES)}'
    if not isinstance(sweep, str):
        return 'a run line needs its "sweep" id'
    instruction = obj.get("resolved_instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        return 'a run line needs its "resolved_instruction"'
    raw = _shared(obj)
    params, metrics = raw.get("params"), raw.get("metrics")
    attempt, exit_code = obj.get("attempt", 1), obj.get("exit_code")
    return RunRecord(
        # Interned: one string per run id, shared by every record of the run read, its
        # sweep's `run_ids` and the run folder's path (pathlib interns its parts), not one per
        # line read (a 10,000-run sweep's index and its read after each compaction).
        id=sys.intern(obj["id"]),
        sweep=raw["sweep"],
        # The line's own objects, seen read-only (not copies: one of each per record).
        params=types.MappingProxyType(params) if isinstance(params, dict) else {},
        resolved_instruction=instruction,
        status=raw["status"],
        backend=_text(raw.get("backend")) or "local",
        workdir=_text(raw.get("workdir")) or ".",
        resources=Resources.from_json(obj.get("resources")),
        attempt=attempt if _count(attempt) and attempt >= 1 else 1,
        job_id=_text(obj.get("job_id")),
        host=_text(raw.get("host")),
        exit_code=exit_code
        if isinstance(exit_code, int) and not isinstance(exit_code, bool)
        else None,
        reason=_text(raw.get("reason")),
        queued_at=_text(obj.get("queued_at")),
        started_at=_text(obj.get("started_at")),
        ended_at=_text(obj.get("ended_at")),
        metrics=types.MappingProxyType(metrics) if isinstance(metrics, dict) else None,
        raw=types.MappingProxyType(raw),
        line=line_no,
    )


def _sweep(obj: Mapping[str, Any], line_no: int) -> SweepRecord | str:
    status, spec, runs = obj.get("status", "active"), obj.get("spec"), obj.get("run_ids", [])
    if status not in SWEEP_STATUSES:
        return f'unknown sweep "status" {status!r}; use one of {", ".join(SWEEP_STATUSES)}'
    if not isinstance(spec, Mapping):
        return 'a sweep line needs its "spec" object'
    cut = obj.get("cut", 0)
    return SweepRecord(
        id=obj["id"],
        name=_text(obj.get("name")) or obj["id"],
        spec=types.MappingProxyType(dict(spec)),
        status=status,
        run_ids=tuple(sys.intern(r) for r in runs if isinstance(r, str))
        if isinstance(runs, list)
        else (),
        cut=cut if _count(cut) else 0,
        created_at=_text(obj.get("created_at")),
        barrier=_text(obj.get("barrier")),
        task=_text(obj.get("task")),
        raw=types.MappingProxyType(dict(obj)),
        line=line_no,
    )


def parse_record(
    data: bytes, line_no: int, file: str = FILE
) -> tuple[Record | None, Problem | None]:
    """One line's record (None when unusable) and the problem found in it; never raises."""
    try:
        obj = loads(data)
    except ValueError:
        return None, Problem(file, line_no, "not valid JSON, skipped; fix or delete the line")
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not obj["id"]:
        return None, Problem(file, line_no, 'not a record with a string "id", skipped')
    kind = obj.get("kind")
    parsed: Record | str
    if kind == "run":
        parsed = _run(obj, line_no)
    elif kind == "sweep":
        parsed = _sweep(obj, line_no)
    else:
        parsed = f'unknown "kind" {kind!r}; a line is a "sweep" or a "run"'
    if isinstance(parsed, str):
        return None, Problem(file, line_no, f"{obj['id']}: {parsed}, skipped")
    return parsed, None


def run_line(run: RunRecord) -> dict[str, Any]:
    """The JSON object of a run's line: its raw fields, overlaid with the record's."""
    return {
        **run.raw,
        "kind": "run",
        "id": run.id,
        "sweep": run.sweep,
        "params": dict(run.params),
        "resolved_instruction": run.resolved_instruction,
        "status": run.status,
        "backend": run.backend,
        "workdir": run.workdir,
        "resources": run.resources.to_json(),
        "attempt": run.attempt,
        "job_id": run.job_id,
        "host": run.host,
        "exit_code": run.exit_code,
        "reason": run.reason,
        "queued_at": run.queued_at,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "metrics": dict(run.metrics) if run.metrics is not None else None,
    }


def sweep_line(sweep: SweepRecord) -> dict[str, Any]:
    """The JSON object of a sweep's line: its raw fields, overlaid with the record's."""
    return {
        **sweep.raw,
        "kind": "sweep",
        "id": sweep.id,
        "name": sweep.name,
        "spec": dict(sweep.spec),
        "status": sweep.status,
        "run_ids": list(sweep.run_ids),
        "cut": sweep.cut,
        "created_at": sweep.created_at,
        "barrier": sweep.barrier,
        "task": sweep.task,
    }


def encode_record(record: Record) -> bytes:
    """One runs.jsonl line, with its newline."""
    obj = run_line(record) if isinstance(record, RunRecord) else sweep_line(record)
    return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)


@frozen_record(frozen=False)
class RunIndex:
    """The latest record per id, fed line by line in file order. `runs` is a dict, or the
    loop's lean table (wild.parsers.run_table) that reads an ended or queued run's line again
    when asked."""

    runs: MutableMapping[str, RunRecord] = field(default_factory=dict)
    sweeps: dict[str, SweepRecord] = field(default_factory=dict)

    def apply(self, records: Iterable[Record]) -> None:
        for record in records:
            if isinstance(record, RunRecord):
                self.runs[record.id] = record
            else:
                self.sweeps[record.id] = record

    def of_sweep(self, sweep_id: str) -> tuple[RunRecord, ...]:
        return tuple(self.each_of_sweep(sweep_id))

    def each_of_sweep(self, sweep_id: str) -> Iterator[RunRecord]:
        """`of_sweep` one record at a time: a lean index reads each from its line, and a
        reader that keeps little of each need not hold them all."""
        sweep = self.sweeps.get(sweep_id)
        for run_id in sweep.run_ids if sweep is not None else ():
            run = self.runs.get(run_id)
            if run is not None:
                yield run
