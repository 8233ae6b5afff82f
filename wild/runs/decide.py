"""The run supervisor's decisions, pure: which runs wait, which end and how, what a run's
next line is after a start, an end, a loss, a stop or a rerun.

The driver (wild.runs.supervisor) reads the files, asks the backends, and appends what
these functions return.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from wild.parsers.runs import RunRecord
from wild.record import record, replace
from wild.runs.backend import Observed, Submitted
from wild.runs.markers import MarkerRead
from wild.runs.signing import command_to_approve, written_by_wild

STOP_FIELD = "stop_requested"  # on a running run's line: why it is being stopped
BACKEND_FIELDS = (
    "backend_fields"  # on a run's line: which fields its backend set (cleared on rerun)
)
LOST = "lost"


NOT_QUEUED_BY_WILD = (
    "refused: this queued line was not written by wild (its signature is missing or does not "
    "match), so nothing ran; queue runs with `wild --sweep FILE` or an agent's <sweep>"
)


@record
class Admission:
    """The queued runs sorted by the gate: those that may start, those waiting for a human's
    approval of their sweep's program, and lines wild did not write (never started)."""

    ready: tuple[RunRecord, ...] = ()
    held: tuple[RunRecord, ...] = ()
    forged: tuple[RunRecord, ...] = ()


def admission(
    queued: Iterable[RunRecord], *, key: bytes, may_run: Callable[[str], bool]
) -> Admission:
    """Which queued runs may start: a line wild signed, whose program the command gate lets
    run (the same gate as a barrier's command: trusted policy, or this exact text approved)."""
    ready, held, forged = [], [], []
    for run in queued:
        if not written_by_wild(key, run):
            forged.append(run)
        elif may_run(command_to_approve(run)):
            ready.append(run)
        else:
            held.append(run)
    return Admission(tuple(ready), tuple(held), tuple(forged))


def by_backend(runs: Iterable[RunRecord]) -> dict[str, list[RunRecord]]:
    grouped: dict[str, list[RunRecord]] = {}
    for run in runs:
        grouped.setdefault(run.backend, []).append(run)
    return grouped


def _raw(run: RunRecord, **changes: Any) -> types.MappingProxyType[str, Any]:
    raw = dict(run.raw)
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    return types.MappingProxyType(raw)


_NOT_NAME = re.compile(r"[^A-Za-z0-9]+")


def run_env(run: RunRecord, wild_dir: str, run_dir: str, base: Mapping[str, str]) -> dict[str, str]:
    """The run's environment (SPEC §7): `base` plus WILD_RUN_ID, WILD_RUN_DIR, WILD_SWEEP_ID,
    WILD_DIR, WILD_RUN_ATTEMPT and WILD_PARAM_<KEY> (non-text values as JSON)."""
    env = dict(base)
    env.update(
        WILD_RUN_ID=run.id,
        WILD_RUN_DIR=run_dir,
        WILD_SWEEP_ID=run.sweep,
        WILD_DIR=wild_dir,
        WILD_RUN_ATTEMPT=str(run.attempt),
    )
    for key, value in run.params.items():
        name = "WILD_PARAM_" + _NOT_NAME.sub("_", str(key)).strip("_").upper()
        env[name] = value if isinstance(value, str) else orjson.dumps(value).decode()
    return env


def started(run: RunRecord, submitted: Submitted, now: str) -> RunRecord:
    fields = dict(submitted.fields)
    return replace(
        run,
        status="running",
        job_id=submitted.job_id or None,
        host=submitted.host,
        started_at=now,
        raw=_raw(run, **fields, **{BACKEND_FIELDS: sorted(fields) or None}),
    )


def refused(run: RunRecord, message: str, now: str, *, prefix: bool = True) -> RunRecord:
    """A run that is not started: failed, the backend's message (or wild's) as the reason."""
    reason = f"cannot start: {message}" if prefix else message
    return replace(run, status="failed", reason=reason, ended_at=now)


def settled(
    run: RunRecord,
    observed: Observed,
    marker: MarkerRead,
    metrics: Mapping[str, Any] | None,
    now: str,
) -> RunRecord | None:
    """The run's terminal line once the backend saw it end or vanish; None while it runs.

    Exit 0 with no reason: finished. Stopped on request (or by a signal to its wrapper):
    stopped. Anything else, a timeout, an unreadable marker, or a vanished process: failed.
    """
    if observed.liveness in ("running", "unknown"):
        return None
    metrics = types.MappingProxyType(dict(metrics)) if metrics is not None else run.metrics
    stop = run.raw.get(STOP_FIELD)
    found = marker.marker
    if observed.liveness == "gone" or (found is None and marker.problem is None):
        detail = observed.detail or "its process vanished without an exit marker"
        if isinstance(stop, str):
            return replace(run, status="stopped", reason=stop, ended_at=now, metrics=metrics)
        return replace(
            run, status="failed", reason=f"{LOST}: {detail}", ended_at=now, metrics=metrics
        )
    if found is None:
        return replace(
            run, status="failed", reason=f"exit marker unreadable: {marker.problem}", ended_at=now
        )
    ended_at = found.ended_at or now
    host = found.host or run.host
    if isinstance(stop, str) or found.reason == "stopped":
        reason = stop if isinstance(stop, str) else "stopped"
        return replace(
            run,
            status="stopped",
            exit_code=found.exit_code,
            reason=reason,
            ended_at=ended_at,
            host=host,
            metrics=metrics,
        )
    ok = found.exit_code == 0 and found.reason is None
    why = found.reason
    if why is not None and found.detail:
        why = f"{why}: {found.detail}"
    return replace(
        run,
        status="finished" if ok else "failed",
        exit_code=found.exit_code,
        reason=why,
        ended_at=ended_at,
        host=host,
        metrics=metrics,
    )


def lost_before_recorded(run: RunRecord, now: str) -> RunRecord:
    """An attempt claimed before a crash whose process cannot be found: never started again."""
    reason = (
        f"{LOST}: attempt {run.attempt} was being started when the loop stopped, and no "
        "process or exit marker of it was found; rerun it if it should run"
    )
    return replace(run, status="failed", reason=reason, ended_at=now)


def stopping(run: RunRecord, reason: str) -> RunRecord:
    """A running run asked to stop: still running until its marker comes."""
    return replace(run, raw=_raw(run, **{STOP_FIELD: reason}))


def stopped_waiting(run: RunRecord, reason: str, now: str) -> RunRecord:
    return replace(run, status="stopped", reason=reason, ended_at=now)


def requeued(run: RunRecord, now: str) -> RunRecord:
    """The run's next attempt, queued: what the last attempt left on the line is cleared."""
    cleared = {key: None for key in (STOP_FIELD, BACKEND_FIELDS)}
    backend_fields = run.raw.get(BACKEND_FIELDS)
    if isinstance(backend_fields, list):
        cleared.update({key: None for key in backend_fields if isinstance(key, str)})
    return replace(
        run,
        status="queued",
        attempt=run.attempt + 1,
        job_id=None,
        host=None,
        exit_code=None,
        reason=None,
        queued_at=now,
        started_at=None,
        ended_at=None,
        metrics=None,
        raw=_raw(run, **cleared),
    )
