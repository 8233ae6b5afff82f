"""Run a story's sweep without the loop: expand the grid, run each point as wild's local
backend would (its own folder, `--key=value` flags, WILD_RUN_* environment), a few at a time.

For `examples/<story>/run.sh --direct` and the story tests: the real runs and their real
metrics, recorded in `.wild/runs.jsonl` in the shared record format, so the analysis reads
them exactly as it reads a sweep the loop ran. A failed run is rerun once, as an agent
answering its alert with `rerun` would.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from wild.parsers.runs import RunRecord, SweepRecord, encode_record
from wild.paths import WildPaths
from wild.store.jsonl import append_line

RUN_TIMEOUT_S = 120.0
TIMEOUT_EXIT = 124  # what timeout(1) exits with


def grid(parameters: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The cartesian product in key order (SPEC §7); an object value stays one grid value."""
    keys = list(parameters)
    return [
        dict(zip(keys, combo, strict=True)) for combo in itertools.product(*parameters.values())
    ]


def flags(values: Mapping[str, Any]) -> list[str]:
    """`--key=value` per parameter; an object's keys become flags of their own (they vary
    together, like seed 002's `{batch_size, mini_batch_size}` pairs)."""
    out: list[str] = []
    for key, value in values.items():
        if isinstance(value, Mapping):
            out += flags(value)
        else:
            text = value if isinstance(value, str) else json.dumps(value)
            out.append(f"--{key}={text}")
    return out


def instruction(spec: Mapping[str, Any], point: Mapping[str, Any], python: str = "python") -> str:
    """The exact shell command of one run: the skill (or base command) and its flags."""
    skill = spec.get("skill")
    if isinstance(skill, Mapping):
        base = shlex.join([python, str(skill["target"]), *flags(skill.get("args") or {})])
    else:
        base = str(spec["base_command"])
    return " ".join([base, *map(shlex.quote, flags(point))])


def sweep_id(spec: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:4]
    return f"sdirect-{digest}"


def _execute(paths: WildPaths, project: Path, run: RunRecord) -> int:
    folder = paths.run_dir(run.id)
    folder.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "WILD_RUN_ID": run.id,
        "WILD_RUN_DIR": str(folder),
        "WILD_SWEEP_ID": run.sweep,
        "WILD_DIR": str(paths.root),
        **{
            f"WILD_PARAM_{k.upper()}": v if isinstance(v, str) else json.dumps(v)
            for k, v in run.params.items()
        },
    }
    with (folder / "log").open("ab") as log:
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", run.resolved_instruction],
                cwd=project / run.workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=RUN_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            log.write(f"wild: killed after {RUN_TIMEOUT_S:g} s\n".encode())
            return TIMEOUT_EXIT
    return done.returncode


def _attempt(paths: WildPaths, project: Path, run: RunRecord) -> RunRecord:
    append_line(paths.runs_log, encode_record(replace(run, status="running")))
    code = _execute(paths, project, run)
    ended = replace(run, status="finished" if code == 0 else "failed", exit_code=code)
    append_line(paths.runs_log, encode_record(ended))
    return ended


def run_sweep(
    project: Path,
    spec: Mapping[str, Any],
    *,
    slots: int = 2,
    out: Callable[[str], None] = print,
) -> str:
    """Run every point of `spec`'s grid in `project`, `slots` at a time; returns the sweep id."""
    paths = WildPaths(project / ".wild")
    paths.root.mkdir(parents=True, exist_ok=True)
    sid = sweep_id(spec)
    every = grid(spec["parameters"])
    points = every[: int(spec.get("max_runs", len(every)))]
    if len(points) < len(every):
        out(f"max_runs keeps {len(points)} of the grid's {len(every)} points")
    runs = [
        RunRecord(
            id=f"{sid}-{n:03d}",
            sweep=sid,
            params=point,
            # A skill runs under this interpreter: the one wild (and numpy) is installed in.
            resolved_instruction=instruction(spec, point, python=sys.executable),
            status="queued",
            workdir=str(spec.get("workdir", ".")),
        )
        for n, point in enumerate(points, start=1)
    ]
    sweep = SweepRecord(
        id=sid,
        name=str(spec["name"]),
        spec=spec,
        status="active",
        run_ids=tuple(r.id for r in runs),
        cut=len(every) - len(points),
    )
    append_line(paths.runs_log, encode_record(sweep))
    for run in runs:
        append_line(paths.runs_log, encode_record(run))

    def one(run: RunRecord) -> None:
        ended = _attempt(paths, project, run)
        if ended.status == "failed":
            out(f"run {run.id} failed (exit {ended.exit_code}); rerunning it once")
            ended = _attempt(paths, project, replace(ended, status="queued", attempt=2))
        out(f"run {run.id} {ended.status} (attempt {ended.attempt}): {run.resolved_instruction}")

    with ThreadPoolExecutor(max_workers=slots) as pool:
        list(pool.map(one, runs))
    append_line(paths.runs_log, encode_record(replace(sweep, status="done")))
    return sid
