"""Is the process state.json names still that process? After a `kill -9` the loop leaves
`"active": true` behind, and its pid may be free or taken by another program.

A process is named by its pid plus its start time (Linux: /proc/<pid>/stat field 22, in clock
ticks since boot) and the boot it belongs to. Where /proc is missing, only "a process with
that pid exists" can be checked. The decision (`liveness`) is pure; `probe` reads /proc.

Imports only `os`, `wild.proc` and the state's data: `wild --status` runs this at every call.
"""

from __future__ import annotations

import functools
import os
from typing import Literal

from wild.parsers.process_id import ProcessId
from wild.procfs import STATE, has_exited, read_small, split_stat

# running: that very process runs; gone: no process has its pid (or only a zombie);
# reused: another process has its pid now; elsewhere: it ran on another host, which this
# one cannot look at.
Liveness = Literal["running", "gone", "reused", "elsewhere"]

_START_TIME_FIELD = 22  # 1-based, as in proc(5)
_BOOT_ID = "/proc/sys/kernel/random/boot_id"


def parse_stat(line: str) -> tuple[str, int] | None:
    """(state letter, start ticks) from a /proc/<pid>/stat line; None if it does not read."""
    fields = split_stat(line) or []
    at = _START_TIME_FIELD - 3  # fields[0] is field 3, the state
    if len(fields) <= at or not fields[at].isdigit():
        return None
    return fields[STATE], int(fields[at])


def liveness(recorded: ProcessId, seen: ProcessId | None, host: str) -> Liveness:
    """Whether `recorded` still runs, given `seen`: what now runs as its pid on `host`."""
    if recorded.host != host:
        return "elsewhere"
    if seen is None:
        return "gone"
    if None not in (recorded.boot_id, seen.boot_id) and recorded.boot_id != seen.boot_id:
        return "reused"  # the machine rebooted since: whatever has the pid now is new
    if None not in (recorded.start_ticks, seen.start_ticks) and (
        recorded.start_ticks != seen.start_ticks
    ):
        return "reused"
    return "running"


def this_host() -> str:
    return os.uname().nodename


@functools.cache  # a process never outlives its boot: read once (the loop asks per agent)
def boot_id() -> str | None:
    """This boot's id (Linux): it changes when the machine restarts."""
    try:
        with open(_BOOT_ID, encoding="ascii") as source:
            return source.read().strip() or None
    except OSError:
        return None


def probe(pid: int, started_at: str | None = None) -> ProcessId | None:
    """What runs as `pid` on this host now; None when nothing does (a zombie has exited)."""
    if pid <= 0:
        return None  # 0 and negatives name process groups to os.kill, never one process
    try:  # three system calls, not a text file's eight (the loop probes each agent it starts)
        stat = parse_stat(read_small(f"/proc/{pid}/stat").decode("utf-8", "replace"))
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None  # /proc works, and has no such process
        return _probe_by_signal(pid, started_at)
    except OSError:
        return _probe_by_signal(pid, started_at)
    if stat is None:
        return _probe_by_signal(pid, started_at)
    state, ticks = stat
    if has_exited(state):
        return None
    return ProcessId(pid, this_host(), ticks, boot_id(), started_at)


def _probe_by_signal(pid: int, started_at: str | None) -> ProcessId | None:
    """Without /proc: signal 0 says whether the pid exists (not whether it is the same)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # it exists, owned by someone else
    return ProcessId(pid, this_host(), started_at=started_at)


def this_process(started_at: str | None = None) -> ProcessId:
    """The calling process, to be recorded in state.json."""
    pid = os.getpid()
    return probe(pid, started_at) or ProcessId(pid, this_host(), started_at=started_at)


def check(recorded: ProcessId) -> Liveness:
    """Look at this host and judge whether `recorded` is still running."""
    host = this_host()
    seen = probe(recorded.pid) if recorded.host == host else None
    return liveness(recorded, seen, host)
