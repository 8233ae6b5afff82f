"""Live updates: wild's file watcher (wild.wake) wakes every open event stream, no timers.

One `FolderWatcher` follows `.wild/` (state.json, events.log and runs.jsonl besides the
loop's files); more follow the folders of the runs that are not finished (their
`metrics.jsonl`, `log` and `exit`, and the folders their trackers' metric files are in) and
the log of the current iteration. After each wake the
set of followed folders is brought up to date. Each change bumps a version number; an event
stream sends the newest version and the page reads the files again.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from wild.errors import WildError
from wild.metrics.readers import metric_readers
from wild.metrics.sources import discover, roots
from wild.parsers.runs import RunIndex
from wild.paths import WildPaths
from wild.store.runs_log import RunLog
from wild.store.self_writes import SelfWrites
from wild.store.state_file import peek_state
from wild.wake import FolderWatcher, Waker, WakeReason

RESCAN_S = 60.0  # the watcher's safety net for lost events
MOST_RUN_FOLDERS = 64  # inotify instances are few (128 per user by default)
RUN_FILES = frozenset({"metrics.jsonl", "metrics.json", "log", "exit"})
_STOP = WakeReason("signal", None, "dashboard stopping")


class Hub:
    """A version number that streams wait on; `bump` wakes them all."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._version = 0
        self._closed = False

    @property
    def version(self) -> int:
        with self._cond:
            return self._version

    def bump(self) -> None:
        with self._cond:
            self._version += 1
            self._cond.notify_all()

    def wait_after(self, seen: int) -> int | None:
        """Block until the version passes `seen`; None once the hub is closed."""
        with self._cond:
            while self._version <= seen and not self._closed:
                self._cond.wait()
            return None if self._closed else self._version

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()


def current_iteration(paths: WildPaths) -> int | None:
    state = peek_state(paths.state)
    return state.iteration if state is not None else None


def followed_folders(
    paths: WildPaths, index: RunIndex | None, iteration: int | None
) -> dict[Path, frozenset[str]]:
    """The folders besides `.wild/` worth following now, and the file names that matter there."""
    wanted: dict[Path, frozenset[str]] = {}
    if iteration is not None:
        names = [f"iteration-{iteration}.log"]
        names += [f"iteration-{iteration}.{copy}.log" for copy in range(1, 4)]
        wanted[paths.logs] = frozenset(names)
    live = [run for run in (index.runs.values() if index else ()) if not run.terminal]
    for run in live[-MOST_RUN_FOLDERS:]:
        wanted[paths.run_dir(run.id)] = RUN_FILES
    # The folders the live runs' trackers write their metric files in (Lightning's
    # `logs/version_0/`, a `checkpoint-*/`), while the inotify budget lasts.
    sweeps = index.sweeps if index is not None else {}
    readers = metric_readers() if live else ()
    for run in reversed(live[-MOST_RUN_FOLDERS:]):
        sweep = sweeps.get(run.sweep)
        found = discover(roots(paths, run, sweep.spec if sweep else None, readers), readers)
        for file, _ in found.files:
            folder = Path(file).parent
            if folder in wanted or len(wanted) <= MOST_RUN_FOLDERS:
                wanted[folder] = wanted.get(folder, frozenset()) | {Path(file).name}
    return wanted


STOP_S = 2.0  # each wait while stopping: a Ctrl-C ends the dashboard within seconds


class LiveWatch:
    """Runs the watchers on a thread of their own and bumps `hub` on every change."""

    def __init__(self, paths: WildPaths, hub: Hub) -> None:
        self._paths = paths
        self._hub = hub
        self._waker = Waker()
        self._main = FolderWatcher(
            paths.root,
            self._waker,
            SelfWrites(),
            safety_rescan_s=RESCAN_S,
            also=frozenset({paths.state.name, paths.events.name, paths.runs_log.name}),
        )
        self._others: dict[Path, tuple[frozenset[str], FolderWatcher]] = {}
        # Kept across wakes: a wake (a run's metrics line, say) reads only what runs.jsonl
        # gained since the last, not the whole file again.
        self._runs = RunLog(paths.runs_log)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wild-serve-watch", daemon=True)

    def start(self) -> None:
        self._main.start()
        self._follow()
        self._thread.start()

    def stop(self) -> None:
        """Stop watching. Every wait is bounded (STOP_S): the threads are daemons, and a
        dashboard asked to stop (Ctrl-C) must end even if a watcher thread hangs."""
        self._stopping.set()
        self._waker.wake(_STOP)
        if self._thread.is_alive():
            self._thread.join(STOP_S)
        self._main.stop(STOP_S)
        for _, watcher in list(self._others.values()):
            watcher.stop(STOP_S)
        self._others.clear()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._main.wait_for_work(None)
            if self._stopping.is_set():
                return
            self._hub.bump()
            self._follow()

    def _follow(self) -> None:
        """Start and stop the extra watchers so they match what is worth following now."""
        index: RunIndex | None = None
        with contextlib.suppress(OSError, WildError):
            self._runs.refresh()
            index = self._runs.index
        wanted = followed_folders(self._paths, index, current_iteration(self._paths))
        for folder in list(self._others):
            if self._others[folder][0] != wanted.get(folder):
                self._others.pop(folder)[1].stop()
        for folder, names in wanted.items():
            if folder in self._others or not folder.is_dir():
                continue
            watcher = FolderWatcher(folder, self._waker, SelfWrites(), also=names)
            try:
                watcher.start()
            except WildError:
                continue  # out of inotify instances: the page still updates on runs.jsonl
            self._others[folder] = (names, watcher)
