"""The loop's one wake event: `.wild/` changes, barrier results, control requests and signals."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Literal

from wild.errors import WildError
from wild.paths import WildPaths
from wild.record import record
from wild.store.files import Signature, stat_signature
from wild.store.self_writes import SelfWrites

if TYPE_CHECKING:
    import logging

    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers.api import BaseObserver

# watchdog (with logging and its threads' modules, ~12 ms) is imported when a watcher starts,
# not with this module: the loop makes its `Waker` and its `FolderWatcher` (which takes the
# baseline that start compares with) before its first read, and starts watching once its
# first agent runs (issue 22 item 8).

# watchdog logs this at ERROR when an event lands while its inotify thread is being stopped: a
# benign shutdown race (the event is for a watcher being closed). With no logging set up, Python
# prints it to stderr as a stray line at exit; every other watchdog message still shows.
_SHUTDOWN_RACE = "queue_events() called when the thread is inactive"


def _not_the_shutdown_race(record: logging.LogRecord) -> bool:
    return _SHUTDOWN_RACE not in record.getMessage()


def new_observer(
    kept: Mapping[str, frozenset[str]] | None = None, listening: threading.Event | None = None
) -> BaseObserver:
    """A watchdog observer, its shutdown race kept off stderr (watchdog imported here).

    `kept`: for a watched folder, the only names whose events it reports (the others are
    dropped on watchdog's inotify reading thread, see `_names_observer`). `listening`: when
    given, the events are read at once only while it is set; while it is clear, at most once
    every `BUSY_READ_S`, in one batch (see `FolderWatcher`'s `batch_while_busy`)."""
    import logging  # noqa: PLC0415 (with watchdog: not before a loop's first agent)

    from watchdog.observers import Observer  # noqa: PLC0415

    logger = logging.getLogger("watchdog.observers.inotify")
    if _not_the_shutdown_race not in logger.filters:
        logger.addFilter(_not_the_shutdown_race)
    if kept and (observer := _names_observer(kept, listening)) is not None:
        return observer
    return Observer()


def _names_observer(
    kept: Mapping[str, frozenset[str]], listening: threading.Event | None = None
) -> BaseObserver | None:
    """watchdog's inotify observer whose watch of each folder in `kept` hands on only the
    events of the names kept for it; None where that observer is not watchdog's inotify one
    of 7.x (another platform, an older watchdog: the plain observer then, as before).

    Why not watchdog as it comes (issue 22 item 8): inotify cannot filter by name, and nearly
    every event in `.wild/` is wild's own (each crash-safe write's temp file created, written,
    chmod'ed and renamed; `events.log` appended). watchdog turns each one into Python objects
    and hands it over three threads (its inotify reader, the watch's emitter, the observer)
    before `FolderWatcher._route` drops it: ~2.6 ms of CPU per loop iteration, on threads that
    compete with the loop's for the GIL. Here the reader drops it first, on the reader thread,
    the first place a name is seen: only what can wake the loop goes on. The rest is watchdog's
    own (the reader, the move pairing, the emitter, the observer), through its documented
    `BaseObserver(emitter_class, ...)`; the class overridden is `InotifyWatchGroup`, the
    callback the reader calls with each event of a watch.

    A rename from an ignored name to a kept one (a crash-safe write: temp → `tasks.md`) goes
    on as its second half alone, which watchdog reports as the kept name's creation; a rename
    of a kept name away, as that name's deletion. Either way `_route` sees the kept name, as it
    did in watchdog's move event; and watchdog never holds a lone first half back (its move
    pairing waits up to 0.5 s for a second half, and every event behind it waits too).

    With `listening`, the reader (`InotifyFD.run`: read, hand each event on, read again) waits
    before each read until `listening` is set, at most `BUSY_READ_S`: what wild writes in a
    busy moment stays in the kernel's queue and is read in one go, not one thread wake-up per
    write (inotify queues, it does not drop: nothing is lost, and the first event after a
    quiet spell is read at once, the reader then waiting in its poll)."""
    try:
        from watchdog.observers.api import DEFAULT_OBSERVER_TIMEOUT, BaseObserver  # noqa: PLC0415
        from watchdog.observers.inotify import (  # noqa: PLC0415
            InotifyEmitter,
            InotifyObserver,
            InotifyWatchGroup,
        )
        from watchdog.observers.inotify_c import (  # noqa: PLC0415
            DEFAULT_EVENT_BUFFER_SIZE,
            InotifyConstants,
            InotifyEvent,
            InotifyFD,
            Mask,
        )
    except ImportError:  # not Linux, or a watchdog before 7 (no InotifyWatchGroup)
        return None
    kept_bytes = {os.fsencode(folder): frozenset(map(os.fsencode, names))
                  for folder, names in kept.items()}  # fmt: skip
    moved_from = InotifyConstants.IN_MOVED_FROM

    class NamesWatchGroup(InotifyWatchGroup):
        names: frozenset[bytes] = frozenset()

        def on_event(self, event: InotifyEvent) -> None:
            if event.name and event.name not in self.names:
                return  # an ignored name: no Python event, no thread hand-over
            if event.mask & moved_from:  # a kept name renamed away: its deletion, at once
                mask = Mask((event.mask & ~moved_from) | InotifyConstants.IN_DELETE)
                event = InotifyEvent(event.wd, mask, 0, event.name)
            super().on_event(event)

    class NamesEmitter(InotifyEmitter):
        def on_thread_start(self) -> None:
            path = os.fsencode(self.watch.path)
            names = kept_bytes.get(path)
            if names is None:
                super().on_thread_start()
                return
            group = type("Group", (NamesWatchGroup,), {"names": names})
            try:  # InotifyEmitter.on_thread_start's, with the group above
                self._inotify = group(
                    self._inotify_fd,
                    path,
                    is_recursive=self.watch.is_recursive,
                    event_mask=self.get_event_mask_from_filter(),
                    follow_symlink=self.watch.follow_symlink,
                )
            except (TypeError, AttributeError):  # a watchdog 7.x that builds it otherwise
                super().on_thread_start()

    class PacedFD(InotifyFD):
        def read_events(
            self, *, event_buffer_size: int = DEFAULT_EVENT_BUFFER_SIZE
        ) -> list[InotifyEvent]:
            if listening is not None:
                listening.wait(BUSY_READ_S)
            return super().read_events(event_buffer_size=event_buffer_size)

    class NamesObserver(InotifyObserver):
        def __init__(self) -> None:  # InotifyObserver's, with the emitter and reader above
            self._inotify_fd = PacedFD() if listening is not None else InotifyFD()
            self._inotify_fd.start()
            BaseObserver.__init__(
                self, NamesEmitter, timeout=DEFAULT_OBSERVER_TIMEOUT, inotify_fd=self._inotify_fd
            )

    return NamesObserver()


def _schedule(
    observer: BaseObserver,
    on_event: Callable[[FileSystemEvent], None],
    folder: str,
    *,
    recursive: bool,
    runs_only: bool = False,
) -> None:
    """Watch `folder` for the events that can change a relevant file (`_event_types`), or for
    those that can bring a run's exit marker (`_run_event_types`: `.wild/runs/`)."""
    events = _run_event_types() if runs_only else _event_types()
    observer.schedule(_handler(on_event), folder, recursive=recursive, event_filter=events)


# The loop's watcher, while the loop works (not asleep in `wait_for_work`), reads its events at
# most this often: an iteration's own writes are one read, not ~14 thread wake-ups competing
# with the loop for the GIL (issue 22 item 8). The most a stop request can be late to cancel a
# running agent (a reader quiet this long waits in its poll and reads at once).
BUSY_READ_S = 0.05

WakeKind = Literal["file", "barrier", "signal", "control", "rescan", "timeout", "run"]
RUN_END_MARKER = "exit"  # `.wild/runs/<id>/exit`, renamed into place; then `<id>` is touched

# Editors' and wild's own scratch files: vim swap/backup/probe, gedit, emacs locks, atomic_write.
_TEMP_PATTERNS = (".*.tmp", "*.swp", "*.swx", "*.swo", "*~", "4913", ".goutputstream-*", ".#*")


def _event_types() -> list[type[FileSystemEvent]]:
    """Only what can change a relevant file; open/close-nowrite would wake the observer thread
    every time wild itself reads a file. Attribute changes count: `chmod u+w tasks.md` is how
    a human releases the work the loop holds for a read-only file, and changes no content."""
    from watchdog.events import (  # noqa: PLC0415 (see new_observer)
        FileAttribEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    return [FileAttribEvent, FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent]


def _run_event_types() -> list[type[FileSystemEvent]]:
    """`.wild/runs/` is watched alone, not its run folders: a run's wrapper, once its exit
    marker is in place, sets its run folder's times (`wild.runs.wrapper.write_marker`), an
    attribute change of an entry of the one folder watched. A watch per run folder (a
    recursive watch) cost the loop an inotify watch and watchdog's paths for each run of the
    sweep, held to its end (~0.4 KB a run, issue 23), and a scan of each new folder; the
    folders' own writes (claim, `pid`, log) are not events at all now. watchdog asks inotify
    for attribute changes only for the modified-event classes: `FileModifiedEvent` is named
    for that (no file of `.wild/runs/` itself is written)."""
    from watchdog.events import DirAttribEvent, FileModifiedEvent  # noqa: PLC0415 (see new_observer)

    return [DirAttribEvent, FileModifiedEvent]


# `stat_signature`: cheap to take; an editor's rename-save changes the inode, a chmod the mode.


@record
class WakeReason:
    """Why the loop woke: `path` is the file concerned (absolute), `detail` any extra word."""

    kind: WakeKind
    path: str | None = None
    detail: str | None = None


TIMEOUT = WakeReason("timeout")


class Waker:
    """The loop's single wake event: any thread calls `wake`, the loop blocks in `wait`."""

    def __init__(self) -> None:
        # An RLock (Condition's default) so a wake from a signal handler that interrupts
        # this thread inside `wait` cannot deadlock on a lock the same thread holds.
        self._cond = threading.Condition()
        # Insertion-ordered and deduplicated: an editor's burst of events for one file
        # becomes one pending reason however long the loop was busy.
        self._pending: dict[WakeReason, None] = {}
        self._wakeups = 0
        self._received = 0
        self._sleeps = 0

    def wake(self, reason: WakeReason) -> None:
        with self._cond:
            self._received += 1
            self._pending[reason] = None
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> list[WakeReason]:
        """Block until a reason is pending, then return all pending reasons at once; [] on timeout.

        No debounce: the first event is returned immediately, and whatever arrives while the
        caller works on it is returned together by the next call.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._pending:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return []
                self._sleeps += 1
                self._cond.wait(remaining)
            # Swap rather than copy-and-clear, so nothing added in between can be dropped.
            reasons, self._pending = self._pending, {}
            self._wakeups += 1
            return list(reasons)

    @property
    def wakeups(self) -> int:
        """How many times `wait` returned with reasons (timeouts are not wake-ups)."""
        return self._wakeups

    @property
    def received(self) -> int:
        """How many times `wake` was called, duplicates included."""
        return self._received

    @property
    def sleeps(self) -> int:
        """How many times `wait` slept on the condition (a polling loop would inflate it)."""
        return self._sleeps


def is_temp_name(name: str) -> bool:
    """Editor scratch files and wild's own atomic-write temp files."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _TEMP_PATTERNS)


def relevant_names(paths: WildPaths) -> frozenset[str]:
    """The `.wild/` files whose change means the loop may have new work."""
    files = (
        *(paths.tasks, paths.alerts, paths.barriers, paths.policy, paths.human, paths.checks),
        paths.runs_log,  # `wild --sweep`, `--rerun` or `--stop-run` from outside the loop
    )
    return frozenset(path.name for path in (*files, paths.control))


def _handler(on_event: Callable[[FileSystemEvent], None]) -> FileSystemEventHandler:
    from watchdog.events import FileSystemEventHandler  # noqa: PLC0415 (see new_observer)

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            on_event(event)

    return Handler()


class FolderWatcher:
    """Watches the `.wild/` folder (not its files: editors save by rename).

    Relevant files wake as "file"; the control file wakes as "control", after `on_control`
    (if given) has been called on the watcher's thread, so a stop request can cancel a running
    agent at once. Everything else is ignored.

    The files' stat signatures are taken when the watcher is made: `start` compares them with
    the files' once it watches, and what changed in between wakes as a rescan does (the control
    file as "control"). A loop makes its watcher before its first read and may start it later
    (once its first agent runs) without losing an edit made in between.

    `batch_while_busy` (the loop's watcher): events are read at once only while the owner
    sleeps in `wait_for_work`; while it works, at most every `BUSY_READ_S`, in one batch
    (inotify keeps them meanwhile). A wake is only ever taken by `wait_for_work`, which lets
    the reader read what is pending first: only `on_control` can be late, by `BUSY_READ_S`.
    """

    def __init__(
        self,
        root: Path,
        waker: Waker,
        self_writes: SelfWrites,
        *,
        safety_rescan_s: float = 300.0,
        on_control: Callable[[], None] | None = None,
        also: frozenset[str] = frozenset(),
        watch_runs: bool = False,
        batch_while_busy: bool = False,
    ) -> None:
        self.waker = waker
        self.self_writes = self_writes
        self.safety_rescan_s = safety_rescan_s
        self._root = os.path.realpath(root)
        paths = WildPaths(Path(self._root))
        self._relevant = relevant_names(paths) | also  # `also`: more names, e.g. state.json
        self._control = str(paths.control)
        # `.wild/runs/` is watched only by the loop, which must wake the moment a run's exit
        # marker appears (its wrapper then touches the run's folder): no polling for run ends.
        self._runs = str(paths.runs) if watch_runs else None
        self._on_control = on_control
        # Set: the reader reads events at once. A watcher that batches while its owner works
        # has it set only in `wait_for_work` (and once stopped).
        self._listening = threading.Event()
        self._batch_while_busy = batch_while_busy
        if not batch_while_busy:
            self._listening.set()
        self._lock = threading.RLock()
        self._observer: BaseObserver | None = None
        self._signatures: dict[str, Signature | None] = self._snapshot()  # start's baseline
        self._next_rescan = time.monotonic() + safety_rescan_s

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching; then what changed since the watcher was made wakes (its baseline,
        taken then, against the files now that events are seen): nothing slips between."""
        if not os.path.isdir(self._root):
            raise WildError(
                f"{self._root}: the state folder does not exist; run `wild --init` or pass --dir"
            )
        with self._lock:
            if self._observer is not None:
                return
            listening = None
            if self._batch_while_busy:
                self._listening.clear()  # (a watcher started again after a stop)
                listening = self._listening
            observer = new_observer({self._root: self._relevant}, listening)
            try:
                _schedule(observer, self._on_event, self._root, recursive=False)
                if self._runs is not None:
                    os.makedirs(self._runs, exist_ok=True)
                    _schedule(observer, self._on_event, self._runs, recursive=False, runs_only=True)
                observer.start()
            except OSError as exc:
                raise WildError(
                    f"cannot watch {self._root}: {exc}; raise the inotify limits "
                    "(sysctl fs.inotify.max_user_instances / max_user_watches) "
                    "or close other file watchers"
                ) from exc
            self._observer = observer
        for changed in self.rescan():
            if changed.path == self._control:  # a request made in between: as its event
                self._control_changed()
            else:
                self.waker.wake(changed)

    def stop(self, timeout: float | None = None) -> None:
        """Stop the observer and wait for its threads to end (at most `timeout` seconds: its
        threads are daemons, so one that does not end cannot keep the process alive)."""
        with self._lock:
            observer, self._observer = self._observer, None
        self._listening.set()  # a reader waiting for its next batch ends now
        if observer is not None:
            observer.stop()
            observer.join(timeout)

    def __enter__(self) -> FolderWatcher:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    # -- waiting ---------------------------------------------------------------------------

    def wait_for_work(self, timeout: float | None) -> list[WakeReason]:
        """Block until something happens; `[TIMEOUT]` when `timeout` passes quietly.

        The safety rescan runs when it is due (every `safety_rescan_s`), catching changes
        whose events were lost (inotify queue overflow, network filesystems).
        """
        self._listening.set()  # what is pending is read now, and every event while asleep
        try:
            return self._wait_for_work(timeout)
        finally:
            if self._batch_while_busy and self._observer is not None:
                self._listening.clear()

    def _wait_for_work(self, timeout: float | None) -> list[WakeReason]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            now = time.monotonic()
            if now >= self._next_rescan:
                for reason in self.rescan():
                    self.waker.wake(reason)
                now = time.monotonic()
            until = self._next_rescan - now
            if deadline is not None:
                until = min(until, deadline - now)
            reasons = self.waker.wait(max(until, 0.0))
            if reasons:
                return reasons
            if deadline is not None and time.monotonic() >= deadline:
                return [TIMEOUT]

    def rescan(self) -> list[WakeReason]:
        """Compare stat signatures with the last known ones; a reason per file that changed."""
        current = self._snapshot()
        with self._lock:
            previous, self._signatures = self._signatures, current
            self._next_rescan = time.monotonic() + self.safety_rescan_s
        reasons: list[WakeReason] = []
        for path in sorted(current.keys() | previous.keys()):
            now, before = current.get(path), previous.get(path)
            chmod = now is not None and before is not None and now[3] != before[3]  # never wild's
            if now != before and (chmod or not self.self_writes.is_own(path)):
                detail = "changed" if now is not None else "deleted"
                reasons.append(WakeReason("rescan", path, detail))
        return reasons

    # -- internals -------------------------------------------------------------------------

    def _snapshot(self) -> dict[str, Signature | None]:
        files = [os.path.join(self._root, name) for name in sorted(self._relevant)]
        return {path: sig for path in files if (sig := stat_signature(path)) is not None}

    def _note(self, path: str) -> None:
        """Record the file's current signature, so the next rescan compares against it."""
        sig = stat_signature(path)
        with self._lock:
            if sig is None:
                self._signatures.pop(path, None)
            else:
                self._signatures[path] = sig

    def _on_event(self, event: FileSystemEvent) -> None:
        # Runs on the observer thread: an exception here would silently end all watching,
        # so anything unexpected becomes a wake that makes the loop re-read everything.
        try:
            paths = [os.fsdecode(event.src_path)]
            if event.dest_path:
                paths.append(os.fsdecode(event.dest_path))
            for path in paths:
                attrib = event.event_type == "attrib"
                self._route(path, is_directory=event.is_directory, attrib=attrib)
        except Exception as exc:
            self.waker.wake(WakeReason("rescan", None, f"watcher error: {exc!r}"))

    def _route(self, path: str, *, is_directory: bool, attrib: bool = False) -> None:
        parent, name = os.path.split(path)
        if is_directory:
            if attrib and parent == self._runs:  # a run's folder touched: its marker is there
                self.waker.wake(WakeReason("run", os.path.join(path, RUN_END_MARKER), name))
            return
        if is_temp_name(name):
            return
        if parent != self._root:
            return
        if name not in self._relevant:
            return
        self._note(path)
        if path == self._control:
            self._control_changed()
        elif attrib or not self.self_writes.is_own(path):
            # A mode change is never wild's own (its writes chmod a temp file), even on a
            # file whose content is still what wild wrote last.
            self.waker.wake(WakeReason("file", path))

    def _control_changed(self) -> None:
        """The control file changed: `on_control` first (a stop cancels a running agent at
        once, on this thread), then the loop wakes to read the request."""
        if self._on_control is not None:
            self._on_control()
        self.waker.wake(WakeReason("control", self._control))


class TreeWatcher:
    """Wakes `waker` on any change under each folder (recursively), wild's own scratch
    files and `ignored` names aside: for views that redraw on whatever a run writes
    (`wild --runs --watch`: metric files several folders down)."""

    def __init__(self, folders: list[Path], waker: Waker, ignored: frozenset[str]) -> None:
        self._folders, self._waker, self._ignored = folders, waker, ignored
        self._observer: BaseObserver | None = None

    def _on_event(self, event: FileSystemEvent) -> None:
        name = os.path.basename(os.fsdecode(event.src_path))
        if not event.is_directory and not is_temp_name(name) and name not in self._ignored:
            self._waker.wake(WakeReason("file", os.fsdecode(event.src_path)))

    def __enter__(self) -> TreeWatcher:
        observer = new_observer()
        for folder in self._folders:
            if folder.is_dir():
                _schedule(observer, self._on_event, str(folder), recursive=True)
        observer.start()
        self._observer = observer
        return self

    def __exit__(self, *_: object) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5.0)


SETTLE_QUIET_S = 0.05  # a burst of events is over once this passes without one
SETTLE_MAX_S = 0.5  # ... or after this long, however steady the stream


def gather(
    wait: Callable[[float], list[WakeReason]], reasons: list[WakeReason]
) -> list[WakeReason]:
    """`reasons` and those of the burst they began: events until SETTLE_QUIET_S pass quietly,
    at most SETTLE_MAX_S. Runs failing together (a bad node) then end in one decision, and
    the loop's reaction to a burst of writes is one, not one per write."""
    gathered = list(reasons)
    deadline = time.monotonic() + SETTLE_MAX_S
    while (left := deadline - time.monotonic()) > 0:
        more = wait(min(SETTLE_QUIET_S, left))
        if more == [TIMEOUT]:
            break
        gathered += [r for r in more if r not in gathered]
    return gathered


def install_signal_handlers(waker: Waker, stop_event: threading.Event) -> Callable[[], None]:
    """SIGINT/SIGTERM stop gracefully (set `stop_event`, wake); a second SIGINT forces.

    Returns a function that puts the previous handlers back. The handler itself only writes
    a byte to a pipe: taking a lock there (Event.set, Condition.notify) can deadlock when
    the signal lands while the main thread holds that very lock. A relay thread, blocked on
    the pipe at no cost, does the setting and waking.
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("install_signal_handlers must be called from the main thread")
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    received = [0]

    def handler(signum: int, _frame: FrameType | None) -> None:
        received[0] += 1
        if signum == signal.SIGINT and received[0] > 1:
            raise KeyboardInterrupt
        with contextlib.suppress(BlockingIOError):
            os.write(write_fd, bytes([signum]))

    def relay() -> None:
        while data := os.read(read_fd, 64):
            for signum in data:
                if signum == 0:
                    return
                stop_event.set()
                waker.wake(WakeReason("signal", None, signal.Signals(signum).name))

    thread = threading.Thread(target=relay, name="wild-signal-relay", daemon=True)
    thread.start()
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    restored = [False]

    def restore() -> None:
        if restored[0]:
            return
        restored[0] = True
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        os.write(write_fd, b"\0")
        thread.join()
        os.close(read_fd)
        os.close(write_fd)

    return restore
