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

DEFAULT_PORT = 8765


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


def serve(
    paths: WildPaths,
    clock: Clock,
    *,
    port: int,
    out: Callable[[str], None],
    beside: Callable[[], None] | None = None,
) -> None:
    """Serve the dashboard; with `beside` (the loop), until it returns, else until Ctrl-C."""
    board = open_dashboard(paths, clock, port)
    names = ", ".join(board.projects)
    try:
        # Printed inside the `try`: a Ctrl-C right after the URL shows (a reader may act on it
        # at once) is still the dashboard's clean stop.
        out(f"Dashboard for {names if len(board.projects) > 1 else paths.root}: {board.url}")
        if beside is not None:
            beside()
        else:
            threading.Event().wait()
    except KeyboardInterrupt:
        if beside is not None:
            raise
        out("Dashboard stopped.")
    finally:
        board.stop()
