"""`wild --serve`: the dashboard alone until Ctrl-C, or beside the loop in the same process."""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable

from wild.clock import Clock
from wild.errors import WildError
from wild.paths import WildPaths
from wild.serve.projects import find_projects
from wild.serve.server import Dashboard


def open_dashboard(paths: WildPaths, clock: Clock, port: int) -> Dashboard:
    """A started dashboard; a taken port is one clear error, not a traceback."""
    board = Dashboard(find_projects(paths.root), clock, port=port)
    try:
        board.start()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise WildError(
                f"port {port} on 127.0.0.1 is in use (another wild --serve?); "
                "pass --port N, or --port 0 for any free port"
            ) from None
        raise
    return board


def _opened(paths: WildPaths, clock: Clock, port: int, out: Callable[[str], None]) -> Dashboard:
    board = open_dashboard(paths, clock, port)
    names = ", ".join(board.projects)
    out(f"Dashboard for {names if len(board.projects) > 1 else paths.root}: {board.url}")
    return board


def serve(
    paths: WildPaths,
    clock: Clock,
    *,
    port: int,
    out: Callable[[str], None],
    beside: Callable[[Callable[[], None]], None] | None = None,
) -> None:
    """Serve the dashboard; beside the loop until it returns, else until Ctrl-C.

    `beside` (the loop) gets a `ready` callable to call once `.wild/` exists and its checks
    passed: the dashboard opens then, so `wild "GOAL" --serve` works in a fresh folder the way
    `wild "GOAL"` does (the dashboard needs the project to be there)."""
    if beside is None:
        alone: Dashboard | None = None
        try:
            # Opened (and its URL printed) inside the `try`: a Ctrl-C right after the URL
            # shows, as a reader may act on it at once, is still the dashboard's clean stop.
            alone = _opened(paths, clock, port, out)
            threading.Event().wait()
        except KeyboardInterrupt:
            out("Dashboard stopped.")
        finally:
            if alone is not None:
                alone.stop()
        return
    boards: list[Dashboard] = []

    def ready() -> None:
        if not boards:
            boards.append(_opened(paths, clock, port, out))

    try:
        beside(ready)
    finally:
        for board in boards:
            board.stop()
