"""Run a story's sweep without the loop, through wild's own run machinery: the sweep is
validated and recorded as `wild --sweep` records it, and the run supervisor with the local
backend runs it, woken by each run's exit marker, a few runs at a time.

For `examples/<story>/run.sh --direct` and the story tests: the real runs and their real
metrics in `.wild/runs.jsonl`, exactly as a loop would leave them. A failed run is rerun
once, as an agent answering its alert with `rerun` would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from wild.clock import SystemClock
from wild.errors import WildError
from wild.parsers.sweeps import SweepSpec, parse_sweep
from wild.paths import WildPaths
from wild.runs.backend import BackendContext
from wild.runs.local import LocalBackend
from wild.runs.record_sweep import record_sweep
from wild.runs.supervisor import RunSupervisor
from wild.store.events_log import EventLog
from wild.store.self_writes import SelfWrites
from wild.wake import FolderWatcher, Waker


def _any_command(_command: str) -> bool:
    return True


POLL_S = 30.0  # a safety net only: each run's end wakes the wait through its marker


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
    parsed = parse_sweep(json.dumps(spec))
    if not isinstance(parsed, SweepSpec):
        raise WildError("the story's sweep is not valid: " + "; ".join(parsed))
    clock = SystemClock()
    outcome = record_sweep(paths, parsed, now=clock.now(), run_backend="local")
    if outcome.sweep is None:
        raise WildError("the story's sweep was refused: " + "; ".join(outcome.errors))
    if outcome.sweep.cut:
        out(f"max_runs keeps {len(outcome.runs)} of the grid's points ({outcome.sweep.cut} cut)")
    backend = LocalBackend(BackendContext(paths, "direct", {"run_slots": str(slots)}))
    # The human asked for this story's own sweep (`wild demo`): its program needs no approval.
    events = EventLog(paths.events, clock)
    supervisor = RunSupervisor(
        paths, {"local": backend}, clock, events, command_gate=lambda: _any_command
    )
    with FolderWatcher(paths.root, Waker(), SelfWrites(), watch_runs=True) as watcher:
        while True:
            for run in supervisor.step().ended:
                out(
                    f"run {run.id} {run.status} (attempt {run.attempt}): {run.resolved_instruction}"
                )
                if run.status == "failed" and run.attempt == 1:
                    out(f"run {run.id} failed (exit {run.exit_code}); rerunning it once")
                    supervisor.rerun(run.id)
            if not supervisor.busy():
                return outcome.sweep.id
            watcher.wait_for_work(POLL_S)
