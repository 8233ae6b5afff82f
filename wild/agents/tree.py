"""Whether a process belongs to an agent's process tree: by session, process group and
ancestry, which a process cannot clear the way it can clear its environment.

Two questions are asked of it:
- is the process calling `wild --approve` (or loosening the policy) inside an agent's tree?
  Approval is the human's act; a command an agent runs must not be able to give it.
- which processes did an agent run leave behind? Cleanup must find an `env -i setsid`
  grandchild, which carries neither the run's environment variable nor the agent's session.

The loop is a child subreaper (`wild.agents.orphans.guarded`): an agent's orphan is
reparented to the loop, so walking the parent chain from any agent descendant reaches the
agent or the loop, never init, while the loop lives.

The decisions (`inside_reason`, `descends`) are pure; `read_proc`, `chain` and `table` read /proc.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from wild import procfs
from wild.liveness import parse_stat
from wild.parsers.process_id import ProcessId
from wild.procfs import split_stat
from wild.record import record

RUN_ENV = "WILD_AGENT_RUN"  # what every agent process is started with (`wild.agents.orphans`)
_MAX_DEPTH = 4096  # a parent chain longer than this is broken (a pid loop while reading /proc)


@record
class Proc:
    """One process as /proc shows it: the numbers that place it in the tree."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    start_ticks: int
    carries_run: bool = False  # its environment, as it was started, names an agent run


def parse_proc_stat(pid: int, line: str) -> Proc | None:
    """A `Proc` from a /proc/<pid>/stat line (the command may hold spaces and parentheses)."""
    fields = split_stat(line) or []
    read = parse_stat(line)
    if read is None or len(fields) < 4 or not all(f.lstrip("-").isdigit() for f in fields[1:4]):
        return None
    return Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), read[1])


def read_proc(pid: int, *, environ: bool = False) -> Proc | None:
    """What /proc says of `pid` now; None when it is gone (or there is no /proc)."""
    try:
        line = procfs.read_small(f"/proc/{pid}/stat").decode("utf-8", "replace")
    except OSError:
        return None
    found = parse_proc_stat(pid, line)
    if found is None or not environ:
        return found
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        env = b""
    carries = any(entry.startswith(f"{RUN_ENV}=".encode()) for entry in env.split(b"\0"))
    return Proc(found.pid, found.ppid, found.pgid, found.sid, found.start_ticks, carries)


def chain(pid: int) -> list[Proc]:
    """`pid` and its ancestors, nearest first, as far as /proc shows them."""
    found: list[Proc] = []
    current: int | None = pid
    while current and len(found) < _MAX_DEPTH:
        proc = read_proc(current, environ=True)
        if proc is None:
            break
        found.append(proc)
        current = proc.ppid if proc.ppid != proc.pid else None
    return found


def _is(proc: Proc, recorded: ProcessId | None) -> bool:
    """Whether `proc` is the recorded process itself (its pid, and its start time if known)."""
    if recorded is None or proc.pid != recorded.pid:
        return False
    return recorded.start_ticks is None or recorded.start_ticks == proc.start_ticks


def inside_reason(
    ancestry: Sequence[Proc], agent: ProcessId | None, loop: ProcessId | None
) -> str | None:
    """Why the first process of `ancestry` (itself, then its ancestors) is inside an agent's
    tree, or None when it is not. `agent` and `loop` are the running agent and loop as
    state.json records them; the agent leads its own session and group (same number)."""
    if not ancestry:
        return None
    me = ancestry[0]
    if _is(me, loop):
        return None  # the loop itself (its dashboard) is wild, not an agent
    if agent is not None and agent.pid in (me.sid, me.pgid):
        return f"it runs in the session of wild's agent (pid {agent.pid})"
    for proc in ancestry:
        if proc.carries_run:
            return f"process {proc.pid}, one of its ancestors or itself, was started as an agent"
    for proc in ancestry[1:]:
        if _is(proc, agent):
            return f"it descends from wild's agent (pid {agent.pid if agent else proc.pid})"
        if _is(proc, loop):
            return f"it descends from wild's loop (pid {proc.pid}), which adopts agents' orphans"
    return None


def table() -> dict[int, Proc]:
    """Every process /proc shows now, by pid."""
    found: dict[int, Proc] = {}
    for pid in _pids():
        proc = read_proc(pid)
        if proc is not None:
            found[pid] = proc
    return found


ChildrenOf = Callable[[int], "list[int] | None"]


def family(root: int, children_of: ChildrenOf | None = None) -> dict[int, Proc] | None:
    """`root` and its descendants as /proc shows them, found by walking down the kernel's
    children lists (a few reads where `table` reads every process on the machine); None where
    the kernel keeps no children lists. A subreaper's family holds every orphan of its
    descendants: an orphan is reparented to the nearest subreaper above it."""
    children_of = children_of or procfs.children
    first = children_of(root)
    if first is None:
        return None
    found: dict[int, Proc] = {}
    todo = [root]
    while todo and len(found) < _MAX_DEPTH * 16:
        pid = todo.pop()
        proc = read_proc(pid)
        if proc is None or pid in found:
            continue
        found[pid] = proc
        # The root's lists were just read: not again (a loop's are one file per thread).
        todo.extend((first if pid == root else children_of(pid)) or ())
    return found


def _pids() -> Iterator[int]:
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                yield int(entry.name)


def descends(procs: Mapping[int, Proc], pid: int, roots: frozenset[int]) -> bool:
    """Whether `pid`'s parent chain in `procs` reaches one of `roots` (itself excluded)."""
    seen = 0
    current = procs.get(pid)
    while current is not None and seen < _MAX_DEPTH:
        if current.ppid in roots:
            return True
        current = procs.get(current.ppid) if current.ppid != current.pid else None
        seen += 1
    return False


def members(
    procs: Mapping[int, Proc],
    leaders: frozenset[int],
    known: frozenset[tuple[int, int]] = frozenset(),
) -> set[int]:
    """The processes of the agent runs led by `leaders` (each led its own session and group;
    it may be dead, its session lives on): those in a leader's session or group, the `known`
    ones (pid, start ticks) still found (members seen earlier, whose parent chain may have been
    cut since), and the descendants of all of these."""
    found = {
        pid
        for pid, proc in procs.items()
        if (pid, proc.start_ticks) in known or proc.sid in leaders or proc.pgid in leaders
    }
    roots = frozenset(found)
    found |= {pid for pid in procs if descends(procs, pid, roots)}
    return found
