"""Exit markers as events: a watch on `.wild/runs/` that calls back when a run's `exit`
appears, so the loop wakes at a run's end instead of polling.

The loop's folder watcher (wild.wake) looks at `.wild/` only, not into its sub-folders;
this adds one recursive watch (one inotify watch per run folder). The wrapper writes the
marker by rename, which arrives as a move onto `exit`; a plain create is taken as well.
`poll` stays the fallback for ends whose events never arrive (network filesystems).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileCreatedEvent, FileMovedEvent, FileSystemEvent
from watchdog.events import FileSystemEventHandler as _Handler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from wild.errors import WildError
from wild.runs.markers import EXIT


class _OnMarker(_Handler):
    def __init__(self, runs_dir: str, on_marker: Callable[[str], None]) -> None:
        self._runs_dir = runs_dir
        self._on_marker = on_marker

    def on_any_event(self, event: FileSystemEvent) -> None:
        target = event.dest_path if isinstance(event, FileMovedEvent) else event.src_path
        run_dir, name = os.path.split(os.fsdecode(target))
        # `runs/<id>/exit` only: a rerun moving an old marker into attempt-<n>/ is no end.
        if name == EXIT and os.path.dirname(run_dir) == self._runs_dir:
            self._on_marker(os.path.basename(run_dir))


class MarkerWatcher:
    """Calls `on_marker(run_id)` (on the watcher's thread) when a run's exit marker appears."""

    def __init__(self, runs_dir: Path, on_marker: Callable[[str], None]) -> None:
        self.runs_dir = runs_dir
        self._handler = _OnMarker(os.path.realpath(runs_dir), on_marker)
        self._observer: BaseObserver | None = None

    def start(self) -> None:
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        observer = Observer()
        try:
            observer.schedule(
                self._handler,
                os.path.realpath(self.runs_dir),
                recursive=True,
                event_filter=[FileCreatedEvent, FileMovedEvent],
            )
            observer.start()
        except OSError as error:
            raise WildError(
                f"cannot watch {self.runs_dir}: {error}; raise the inotify limits "
                "(sysctl fs.inotify.max_user_watches) or close other file watchers"
            ) from error
        self._observer = observer

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join()

    def __enter__(self) -> MarkerWatcher:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
