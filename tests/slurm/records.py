"""Run records for the Slurm tests, built through the real parser so `raw` is filled."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from wild.parsers.runs import RunRecord, parse_record


def run_record(run_id: str, instruction: str = "true", **fields: Any) -> RunRecord:
    """A queued run of sweep `s1` with `fields` (resources, slurm, attempt…) on its line."""
    line = {
        "kind": "run",
        "id": run_id,
        "sweep": "s1",
        "params": {},
        "resolved_instruction": instruction,
        "status": "queued",
        "backend": "slurm",
        **fields,
    }
    record, problem = parse_record(orjson.dumps(line), 1)
    assert isinstance(record, RunRecord), problem
    return record


def submitted(run: RunRecord, job_id: str) -> RunRecord:
    """The run as the supervisor records it after `submit`."""
    return dataclasses.replace(run, job_id=job_id, status="running")
