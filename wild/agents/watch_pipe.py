"""The loop's pipe to its orphan watcher (`wild.agents.orphans.guarded`), and what the loop
told it: each process found in an agent's tree, as "pid:ticks" lines.

A process that cleared its environment and left the agent's session has nothing left to be
found by once the loop is SIGKILLed (its parent chain then leads to init). So the loop tells
the watcher of every member while it can, and the watcher kills them if the loop dies.
"""

from __future__ import annotations

import contextlib
import os
import threading

from wild.agents import tree

_lock = threading.Lock()
_fd: int | None = None  # the write end, while `guarded` runs
_told: set[tuple[int, int]] = set()


def attach(fd: int) -> None:
    """From now on, tell the watcher on the other end of `fd`."""
    global _fd  # noqa: PLW0603 - one watcher per process: the loop's
    with _lock:
        _fd = fd
        _told.clear()


def detach(last: bytes) -> None:
    """Write `last` (the line that says all was swept) and close the pipe."""
    global _fd
    with _lock:
        fd, _fd = _fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):  # a watcher killed already: nothing to tell
            os.write(fd, last)
        os.close(fd)


def tell(found: set[tuple[int, int]]) -> None:
    """Let the watcher know these (pid, start ticks); nothing when no watcher is attached."""
    with _lock:
        new = found - _told
        if _fd is None or not new:
            return
        _told.update(new)
        lines = "".join(f"{pid}:{ticks}\n" for pid, ticks in sorted(new))
        with contextlib.suppress(OSError):  # a watcher killed already: nothing to tell
            os.write(_fd, lines.encode())


def tree_members(known: frozenset[tuple[int, int]]) -> set[tuple[int, int]]:
    """The `known` processes still running, the members of the sessions and groups those
    lead, and all their descendants (`wild.agents.tree.members`)."""
    procs = tree.table()
    alive = frozenset(p for p, ticks in known if p in procs and procs[p].start_ticks == ticks)
    return {(pid, procs[pid].start_ticks) for pid in tree.members(procs, alive, known)}


def told_members() -> set[tuple[int, int]]:
    """`tree_members` of all the watcher was told."""
    with _lock:
        known = frozenset(_told)
    return tree_members(known)
