"""`ProcessId`: one process as state.json names it, in a module of its own so that
`wild.liveness` (run by every `wild --status`) needs nothing else of the state's parser."""

from __future__ import annotations

from typing import Any

from wild.record import record


@record
class ProcessId:
    """One process, named so that a later reader can tell it from another that got its pid.

    `start_ticks` is the start time in clock ticks since boot (Linux: /proc/<pid>/stat field
    22) and `boot_id` the boot it belongs to; both are None where /proc is not available, and
    then only the pid can be checked. `started_at` is when wild recorded it (for people).
    """

    pid: int
    host: str
    start_ticks: int | None = None
    boot_id: str | None = None
    started_at: str | None = None


def process_json(process: ProcessId | None) -> dict[str, Any] | None:
    """A process as state.json (and the status cache) hold it."""
    if process is None:
        return None
    return {
        "pid": process.pid,
        "host": process.host,
        "startTicks": process.start_ticks,
        "bootId": process.boot_id,
        "startedAt": process.started_at,
    }


def process_from_json(data: dict[str, Any] | None) -> ProcessId | None:
    """The process `process_json` wrote (the status cache's own data: not checked again)."""
    if data is None:
        return None
    return ProcessId(
        data["pid"], data["host"], data["startTicks"], data["bootId"], data["startedAt"]
    )
