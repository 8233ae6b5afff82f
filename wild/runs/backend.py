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

Backends are found by name among the `wild.run_backends` entry points, so a site adds
PBS, LSF or Kubernetes without forking wild: `[project.entry-points."wild.run_backends"]
pbs = "site_wild.pbs:PbsBackend"`. A backend class is built with a `BackendContext`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from wild.errors import WildError
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths

ENTRY_POINT_GROUP = "wild.run_backends"
# Found even before the package's entry points are installed (an editable checkout).
_BUILT_IN = {"local": "wild.runs.local:LocalBackend", "slurm": "wild.runs.slurm:SlurmBackend"}

Liveness = Literal["running", "ended", "gone", "unknown"]


@dataclass(frozen=True)
class BackendContext:
    """What a backend is built with: the folder, the loop's tag and the user's settings."""

    paths: WildPaths
    tag: str  # names this loop's jobs (Slurm job names), so one query finds them all
    settings: Mapping[str, str]  # e.g. {"run_slots": "4"} from --run-slots; backend-specific


@dataclass(frozen=True)
class Submitted:
    """A run the backend accepted: its handle, and where it runs.

    `fields` are backend-specific facts recorded on the run's line (the local backend's
    `gpu_ids`), so a restarted loop knows them.
    """

    job_id: str
    host: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
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


def load_backend(name: str, context: BackendContext) -> RunBackend:
    """The backend registered under `name`; WildError naming the ones that exist."""
    # Imported here: importlib.metadata brings email and zipfile (~15 ms), which a loop that
    # starts no run must not pay before its first agent starts.
    from importlib.metadata import EntryPoint, entry_points  # noqa: PLC0415

    found = {key: EntryPoint(key, value, ENTRY_POINT_GROUP) for key, value in _BUILT_IN.items()} | {
        ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)
    }
    if name not in found:
        known = ", ".join(sorted(found)) or "none"
        raise WildError(
            f'no run backend "{name}" (installed: {known}); pick one of them, or install '
            f'the package that registers "{name}" under the {ENTRY_POINT_GROUP} entry points'
        )
    factory = found[name].load()
    backend: RunBackend = factory(context)
    return backend
