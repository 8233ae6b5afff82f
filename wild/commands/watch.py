"""`wild --status --watch`: redraw the status when something happens, never on a timer.

Two kinds of event wake it: a change to a `.wild/` file (watchdog; state.json included, since
the loop's iteration, agent and current work live there), and the exit of the loop process
state.json names (Linux pidfd), because a `kill -9` writes no file and the screen would
otherwise say "running" forever. A burst of writes (the loop writes several files per step)
is one redraw.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable
from pathlib import Path

from wild.clock import Clock
from wild.liveness import check
from wild.paths import WildPaths
from wild.store.self_writes import SelfWrites
from wild.store.state_file import peek_state
from wild.wake import TIMEOUT, FolderWatcher, TreeWatcher, Waker, WakeReason, gather
from wild.workspace import load_workspace, require_initialised
from wild.workspace_view import Workspace

RESCAN_S = 60.0  # the watcher's safety net for lost events: redraws only if a file changed


class ExitWatch:
    """Wakes `waker` when the followed process exits: a pidfd turns readable, no polling.

    Where pidfds do not exist (not Linux, or a kernel before 5.3) it does nothing: file
    events alone then drive the redraws.
    """

    def __init__(self, waker: Waker, reason: WakeReason) -> None:
        self._waker = waker
        self._reason = reason
        self._pid: int | None = None
        self._stop: tuple[int, int] | None = None  # a pipe whose write end ends the wait
        self._thread: threading.Thread | None = None

    def follow(self, pid: int | None) -> None:
        """Watch `pid` from now on (None: nothing); the process watched before is dropped."""
        if pid == self._pid:
            return
        self.close()
        self._pid = pid
        if pid is None or not hasattr(os, "pidfd_open"):
            return
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            self._waker.wake(self._reason)  # it exited between the look and now
            return
        except OSError:
            return  # no pidfd support: file events only
        self._stop = os.pipe()
        self._thread = threading.Thread(
            target=self._wait, args=(pidfd, self._stop[0]), name="wild-watch-exit", daemon=True
        )
        self._thread.start()

    def _wait(self, pidfd: int, stop: int) -> None:
        try:
            ready, _, _ = select.select([pidfd, stop], [], [])
            if pidfd in ready:
                self._waker.wake(self._reason)
        finally:
            os.close(pidfd)

    def close(self) -> None:
        thread, stop = self._thread, self._stop
        self._thread, self._stop, self._pid = None, None, None
        if stop is not None:
            os.write(stop[1], b"x")
        if thread is not None:
            thread.join()
        if stop is not None:
            for fd in stop:
                os.close(fd)

    def __enter__(self) -> ExitWatch:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def running_loop_pid(paths: WildPaths) -> int | None:
    """The pid of the loop state.json names, if that very process runs on this host now."""
    state = peek_state(paths.state)
    process = state.loop_process if state is not None and state.active else None
    return process.pid if process is not None and check(process) == "running" else None


def watch_status(
    paths: WildPaths,
    clock: Clock,
    show: Callable[[Workspace], None],
    *,
    max_updates: int | None = None,
) -> int:
    """Call `show` now and after every change until interrupted; returns the updates shown."""
    require_initialised(paths)
    shown = 0
    waker = Waker()
    exited = WakeReason("file", str(paths.state), "the loop it names exited")
    watcher = FolderWatcher(
        paths.root,
        waker,
        SelfWrites(),
        safety_rescan_s=RESCAN_S,
        also=frozenset({paths.state.name}),
    )
    with watcher, ExitWatch(waker, exited) as exits:
        while True:
            exits.follow(running_loop_pid(paths))
            show(load_workspace(paths, clock.now()))
            shown += 1
            if max_updates is not None and shown >= max_updates:
                return shown
            gather(watcher.wait_for_work, watcher.wait_for_work(None))  # a burst: one redraw


def watch_runs(
    paths: WildPaths,
    folders: list[Path],
    show: Callable[[], None],
    *,
    max_updates: int | None = None,
) -> int:
    """Call `show` now and after every change to `.wild/` (runs.jsonl, every run's folder)
    or the given `folders` (the runs' workdirs) until interrupted; returns the updates shown."""
    require_initialised(paths)
    shown = 0
    waker = Waker()
    # The kept summaries are rewritten by `show` itself: that write must not wake a redraw.
    ignored = frozenset(
        {
            paths.metrics_cache.name,
            paths.status_cache.name,
            paths.work_cache.name,
            paths.runs_listing.name,
            paths.runs_view.name,
            paths.runs_json_view.name,
        }
    )
    with TreeWatcher([paths.root, *folders], waker, ignored):
        while True:
            show()
            shown += 1
            if max_updates is not None and shown >= max_updates:
                return shown
            # A burst of writes (a training step writes several files) is one redraw.
            gather(lambda wait_s: waker.wait(wait_s) or [TIMEOUT], waker.wait(None))
