"""`wild --status --watch`: redraw the status whenever a `.wild/` file changes (no polling)."""

from __future__ import annotations

from collections.abc import Callable

from wild.clock import Clock
from wild.paths import WildPaths
from wild.store.self_writes import SelfWrites
from wild.wake import FolderWatcher, Waker
from wild.workspace import Workspace, load_workspace, require_initialised

RESCAN_S = 60.0


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
    with FolderWatcher(paths.root, Waker(), SelfWrites(), safety_rescan_s=RESCAN_S) as watcher:
        while True:
            show(load_workspace(paths, clock.now()))
            shown += 1
            if max_updates is not None and shown >= max_updates:
                return shown
            watcher.wait_for_work(None)
