"""The small interface every run backend implements, and how one is found by name.

A backend takes runs whose `resolved_instruction` is already persisted and turns them into
processes or jobs; it never decides what to run. The loop (through wild.runs.supervisor)
asks it to `admit` queued runs (a backend with a limited pool, like `local`, admits as
many as fit), to `submit` each admitted run, to `poll` all of its active runs in ONE call
(one `squeue` for Slurm, one /proc scan for local), and to `cancel` a run's whole group.

Every run, on every backend, goes through a wrapper that writes `.wild/runs/<id>/log` and,
atomically (temp file + rename), `.wild/runs/<id>/exit`, a JSON object:
`{"run": id, "attempt": N, "exit_code": N, "signal": name|null, "ended_at": iso,
"host": name, "reason": "timeout"|"stopped"|null}`. The wrapper is one standalone file,
`wild/runs/wrapper.py` (no wild imports, so it starts fast and runs on any node that sees
the folder), invoked as
`python wrapper.py --run-dir DIR --run-id ID --attempt N --workdir W [--time-limit S] --
INSTRUCTION` (INSTRUCTION is one argument, run by `/bin/sh -c` in W). It writes its own
pid to `DIR/pid` first, runs the instruction in a process group of its own (so `cancel`
kills the instruction's whole group while the wrapper survives to write the marker), and
on SIGTERM or the time limit kills that group (SIGTERM, then SIGKILL after a grace). The
marker's appearance wakes the loop through the folder watcher; `poll`
is the fallback for ends whose file events never arrive (shared filesystems) and for runs
whose process vanished without a marker (`lost`).

A backend class is built with a `BackendContext`; wild/runs/registry.py finds one by name
(the built-in `local` and `slurm`, and a site's own through entry points). This module
imports no backend: they import it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol

from wild.errors import WildError
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.record import record

Liveness = Literal["running", "ended", "gone", "unknown"]


class AdoptionDeferred(WildError):
    """Raised by a backend's `adopt` that cannot tell yet whether a claimed attempt started
    (a process that may still start it outlived every attempt to stop it): the attempt is
    neither adopted, nor given up as lost, nor started again, and is looked at again at the
    next step. The message, when not empty, is one line for the human, said once."""


@record
class BackendContext:
    """What a backend is built with: the folder, the loop's tag and the user's settings."""

    paths: WildPaths
    tag: str  # names this loop's jobs (Slurm job names), so one query finds them all
    settings: Mapping[str, str]  # e.g. {"run_slots": "4"} from --run-slots; backend-specific


@record
class Submitted:
    """A run the backend accepted: its handle, and where it runs.

    `fields` are backend-specific facts recorded on the run's line (the local backend's
    `gpu_ids`), so a restarted loop knows them.
    """

    job_id: str
    host: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)


@record
class Observed:
    """What `poll` saw of one active run.

    `ended`: the exit marker is there (read it with wild.runs.markers); `gone`: no process or
    job and no marker (after the backend's grace period: the run is lost); `unknown`: the
    backend could not tell this cycle (a controller down): nothing is decided on it.
    """

    liveness: Liveness
    detail: str | None = None


class RunBackend(Protocol):
    """The plug-in interface. Methods may raise WildError with a clear one-line message;
    the loop turns it into an alert and never crashes on it."""

    name: str

    def admit(self, queued: Iterable[RunRecord], active: Sequence[RunRecord]) -> list[RunRecord]:
        """The queued runs to submit now, in order (a pool admits as many as fit). `queued`
        is read lazily, in order: take from it only as many as may start."""
        ...

    def submit(self, run: RunRecord, env: Mapping[str, str]) -> Submitted:
        """Start one run through the wrapper with `env` (the WILD_* variables included)."""
        ...

    def poll(self, active: Sequence[RunRecord]) -> dict[str, Observed]:
        """One status cycle for all active runs of this backend: run id → what was seen."""
        ...

    def cancel(self, run: RunRecord) -> None:
        """Stop the run's whole process group or job; its wrapper still writes the marker."""
        ...
