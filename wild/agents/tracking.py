"""One agent run's process tree, followed while it runs, so that cleanup finds every process
of the run by what a child cannot clear: its session, its process group and its ancestry.

A child can clear `WILD_AGENT_RUN` (`env -i`) and leave the agent's session and group
(`setsid`); what it cannot leave is its parent chain, which leads to the agent, or, once its
parent died, to the loop (a child subreaper). So every TRACK_S while the agent runs, the
tree is looked at: the agent's session and group, the agent's descendants, and the orphans the
loop adopted since the agent started. Each process found is remembered, so it stays found
after its chain is cut (the agent killed on a timeout), and told to the loop's watcher, which
kills them if the loop is SIGKILLed (`wild.agents.watch_pipe`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from wild import procfs
from wild.agents import orphans, tree, watch_pipe

# How often the tree is looked at while the agent runs: a look reads /proc/<pid>/stat of every
# process (about 1 ms per 100). A loop SIGKILLed within TRACK_S of a grandchild's `setsid` may
# miss it; the grandchild keeps its run id unless it also cleared its environment.
TRACK_S = 0.5


class RunTree:
    """The processes of the agent run led by `leader` (the agent: it leads its own session)."""

    def __init__(self, leader: int, spawner: int | None = None) -> None:
        """`spawner`: the native id of the loop's thread that started the leader (by default
        the thread that makes this)."""
        self.leader = leader
        self.spawner = threading.get_native_id() if spawner is None else spawner
        found = tree.read_proc(leader)
        self.since = found.start_ticks if found is not None else 0
        self._known: set[tuple[int, int]] = set() if found is None else {(leader, self.since)}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def look(self) -> Mapping[int, tree.Proc]:
        """The processes a member can be among, read from /proc now: the loop's family where
        the loop is a subreaper and the kernel lists children (every orphan of the run is
        reparented into it), else every process on the machine."""
        if orphans.is_subreaper():
            found = tree.family(os.getpid(), self._children_of)
            if found is not None:
                return found
        return tree.table()

    def _children_of(self, pid: int) -> list[int] | None:
        """A process's children; the loop's, from the two of its threads the run's processes
        can hang from: the thread that started the leader (its parent), and the first, where
        the kernel reparents an orphan (to the first living thread of its subreaper). The
        loop's other threads (the barrier checker's commands, the watcher) hold none of the
        run; each thread is a file to read (issue 22 item 8)."""
        loop = os.getpid()
        return procfs.children(pid, (loop, self.spawner) if pid == loop else None)

    def members(self, procs: Mapping[int, tree.Proc] | None = None) -> set[tuple[int, int]]:
        """Look at the tree now (or in `procs`, a `look` just taken): every member (pid, start
        ticks), remembered and told."""
        procs = self.look() if procs is None else procs
        new_orphans = {
            (pid, procs[pid].start_ticks)
            for pid in orphans.adopted(procs)
            if pid in procs and procs[pid].start_ticks >= self.since
        }
        with self._lock:
            known = frozenset(self._known | new_orphans)
            alive = (
                pid for pid, ticks in known if pid in procs and procs[pid].start_ticks == ticks
            )
            leaders = frozenset(alive) | {self.leader}
            found = {(pid, procs[pid].start_ticks) for pid in tree.members(procs, leaders, known)}
            self._known |= found
        watch_pipe.tell(found)
        return found

    def start(self) -> RunTree:
        """Look now, then every TRACK_S, in a thread of its own, until `stop` (the runner
        starts it once the run has gone on for TRACK_S)."""
        self._thread = threading.Thread(target=self._follow, name="wild-agent-tree", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _follow(self) -> None:
        while not self._stop.is_set():
            self.members()
            if self._stop.wait(TRACK_S):
                return
