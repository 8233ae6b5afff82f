"""Shared helpers for the run tests: a project with queued runs, and driving a supervisor."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from wild.clock import SystemClock
from wild.parsers.runs import Resources, RunRecord
from wild.paths import WildPaths
from wild.runs import signing
from wild.runs.backend import BackendContext
from wild.runs.local import LocalBackend
from wild.runs.supervisor import RunSupervisor, StepResult
from wild.store.events_log import EventLog, read_events
from wild.store.runs_log import append_records

BOUND_S = 30.0


def project(tmp_path: Path) -> WildPaths:
    root = tmp_path / "proj" / ".wild"
    root.mkdir(parents=True)
    return WildPaths(root)


def queue(
    paths: WildPaths,
    instruction: str,
    count: int = 1,
    *,
    sweep: str = "s1",
    resources: Resources | None = None,
    start: int = 0,
) -> list[str]:
    ids = []
    for number in range(start, start + count):
        run = RunRecord(
            id=f"{sweep}-{number:03d}",
            sweep=sweep,
            params={"seed": number},
            resolved_instruction=instruction,
            status="queued",
            resources=resources or Resources(),
        )
        append_records(paths.runs_log, [signing.sign(signing.load_key(), run)])  # as wild queues
        ids.append(run.id)
    return ids


def local(
    paths: WildPaths, slots: int = 4, environ: Mapping[str, str] | None = None
) -> LocalBackend:
    context = BackendContext(paths, "test", {"run_slots": str(slots)})
    return LocalBackend(context, environ=environ or {}, list_gpus=lambda: ())


def supervisor(paths: WildPaths, backend: LocalBackend) -> RunSupervisor:
    clock = SystemClock()
    events = EventLog(paths.events, clock)
    return RunSupervisor(paths, {"local": backend}, clock, events, command_gate=any_command)


def any_command() -> Callable[[str], bool]:
    """The command gate of a trusted policy: every program may run."""
    return lambda _command: True


def wait_children(backend: LocalBackend, limit_s: float = BOUND_S) -> None:
    """Until one of the wrappers this backend started exits (the event a marker follows)."""
    deadline = time.monotonic() + limit_s
    procs = list(backend._children.values())
    while procs and time.monotonic() < deadline:
        if any(proc.poll() is not None for proc in procs):
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            procs[0].wait(timeout=0.05)


def driven(paths: WildPaths, slots: int = 4) -> RunSupervisor:
    """A fresh supervisor over a fresh local backend (as a restarted loop's), stepped until no
    run is queued or running."""
    backend = local(paths, slots=slots)
    sup = supervisor(paths, backend)
    drive(sup, backend)
    return sup


def drive(sup: RunSupervisor, backend: LocalBackend, limit_s: float = BOUND_S) -> list[StepResult]:
    """Step until no run is queued or running; the results of every step."""
    results = []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        results.append(sup.step())
        if not sup.busy():
            return results
        wait_children(backend, max(0.1, deadline - time.monotonic()))
        if not backend._children:
            time.sleep(0.05)  # adopted runs are no children of ours: look again shortly
    raise AssertionError("runs did not end in time")


def events(paths: WildPaths, kind: str) -> list[dict[str, Any]]:
    found, _problems = read_events(paths.events)
    return [event for event in found if event["kind"] == kind]
