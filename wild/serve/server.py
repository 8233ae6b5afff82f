"""The dashboard's HTTP server: http.server's threading server on 127.0.0.1, nothing else.

Routes: `/` (the page), `/static/…` (its script and styles, package data), `/api/view`
(everything shown, as JSON), `/api/log` (a log's tail), `/api/stream` (server-sent events,
one per change on disk) and `POST /api/action` (an action, through the CLI's code). Every
request passes `Access.judge` first; no route keeps state of its own.
"""

from __future__ import annotations

import logging
import os
import re
import select
import threading
from collections.abc import Mapping
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

import orjson

from wild.clock import Clock
from wild.errors import ConflictError, RefusedWriteError, WildError, describe_os_error
from wild.http_guard import (
    REQUEST_DEADLINE_S,
    ConnectionLimits,
    Guard,
    GuardedHandler,
    GuardedServer,
    RefusalLog,
)
from wild.paths import WildPaths
from wild.record import replace
from wild.serve import DEFAULT_PORT
from wild.serve.access import Access, new_token
from wild.serve.act import perform
from wild.serve.events_view import EventFilter, read_tail
from wild.serve.live import STOP_S, Hub, LiveWatch
from wild.serve.view import Window, dashboard
from wild.workspace import ParseCache

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 64  # open pages' event streams, their requests, and room to spare
MAX_BODY = 64 * 1024  # an action's JSON: a human's instruction fits many times over
LOG_TAIL = 64 * 1024
STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "dom.js": "text/javascript; charset=utf-8",
    "charts.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")
SECURITY_HEADERS = {
    # No inline script or style, nothing from elsewhere: a title that slipped through as HTML
    # still could not run.
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _static(name: str) -> bytes:
    return resources.files("wild.serve").joinpath("static", name).read_bytes()


def _int(query: dict[str, list[str]], key: str, default: int, most: int) -> int:
    try:
        return max(0, min(int(query.get(key, [str(default)])[0]), most))
    except ValueError:
        return default


def window_of(query: dict[str, list[str]]) -> Window:
    """The pages of each list the page asked for, bounded."""
    big = 10**9
    return Window(
        tasks_offset=_int(query, "tasks", 0, big),
        alerts_offset=_int(query, "alerts", 0, big),
        runs_offset=_int(query, "runs", 0, big),
        events=EventFilter(
            text=query.get("q", [""])[0][:200], errors=query.get("errors", [""])[0] == "1"
        ),
    )


class _Server(GuardedServer):
    app: Dashboard


class _Handler(GuardedHandler):
    server: _Server
    server_version = "wild"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal belongs to the loop when both run in one process."""

    # -- replies ---------------------------------------------------------------------------

    def _send(
        self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in {**SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value: object) -> None:
        self._send(status, orjson.dumps(value), "application/json")

    def _project(self, name: object) -> WildPaths | None:
        """The project `name` picks (the first when not given); None after a 404 was sent."""
        projects = self.server.app.projects
        if name in (None, ""):
            return next(iter(projects.values()))
        if isinstance(name, str) and name in projects:
            return projects[name]
        self._json(404, {"error": f"no project {name!r}; known: {', '.join(projects)}"})
        return None

    def _admitted(self) -> bool:
        verdict = self.server.app.access.judge(self.command, self.path, dict(self.headers))
        if not verdict.allowed:
            self._json(verdict.status, {"error": verdict.reason})
            return False
        if verdict.from_query:
            # The token leaves the URL (history, screen shares) for the HttpOnly cookie.
            url = urlsplit(self.path)
            kept = [(k, v) for k, v in parse_qsl(url.query) if k != "token"]
            location = (url.path or "/") + (f"?{urlencode(kept)}" if kept else "")
            self.send_response(303)
            self.send_header("Location", location)
            self.send_header("Set-Cookie", self.server.app.access.set_cookie())
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False
        return True

    # -- routes ----------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._admitted():
            return
        app = self.server.app
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/":
            self._send(200, _static("index.html"), "text/html; charset=utf-8")
        elif url.path.startswith("/static/") and url.path[8:] in STATIC:
            self._send(200, _static(url.path[8:]), STATIC[url.path[8:]])
        elif url.path in ("/api/view", "/api/log"):
            name = query.get("project", [""])[0]
            paths = self._project(name)
            if paths is None:
                return
            if url.path == "/api/log":
                self._log(paths, query)
                return
            chosen = name or next(iter(app.projects))
            lock, cache = app.caches[chosen]
            try:
                with lock:
                    data = dashboard(paths, app.clock.now(), window_of(query), cache)
            except WildError as exc:
                data = {"fatal": str(exc), "problems": [str(exc)]}
            except OSError as exc:  # a folder where tasks.md belongs, an unreadable file
                data = {"fatal": describe_os_error(exc), "problems": [describe_os_error(exc)]}
            except Exception as exc:  # a bug: the page says so instead of going blank
                text = f"the dashboard could not read {paths.root} ({type(exc).__name__}: {exc})"
                data = {"fatal": text, "problems": [text + "; please report it"]}
            projects = list(app.projects)
            self._json(
                200, {**data, "version": app.hub.version, "projects": projects, "project": chosen}
            )
        elif url.path == "/api/stream":
            self._stream()
        else:
            self._json(404, {"error": f"no such page {url.path}"})

    def do_POST(self) -> None:
        if not self._admitted():
            return
        if urlsplit(self.path).path != "/api/action":
            self._json(404, {"error": "no such action endpoint"})
            return
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype != "application/json":
            self._json(415, {"error": "send the action as application/json"})
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._json(411, {"error": "Content-Length is required"})
            return
        if length < 0 or length > MAX_BODY:
            self._json(413, {"error": f"the request body is over {MAX_BODY} bytes"})
            return
        try:
            body = orjson.loads(self.rfile.read(length))
        except orjson.JSONDecodeError as exc:
            self._json(400, {"error": f"the body is not JSON: {exc}"})
            return
        app = self.server.app
        paths = self._project(body.get("project") if isinstance(body, dict) else None)
        if paths is None:
            return
        try:
            message = perform(paths, app.clock, body)
        except ConflictError as exc:
            self._json(409, {"error": str(exc)})
            return
        except WildError as exc:
            self._json(400, {"error": str(exc)})
            return
        except OSError as exc:
            self._json(500, {"error": f"could not write: {exc}"})
            return
        self._json(200, {"message": message})

    def _log(self, paths: WildPaths, query: dict[str, list[str]]) -> None:
        """The tail of an iteration's log (`name`, in logs/) or a run's (`run`, its id)."""
        name, run = query.get("name", [""])[0], query.get("run", [""])[0]
        if _SAFE_NAME.fullmatch(name) and name.endswith(".log"):
            path = paths.logs / name
        elif _SAFE_NAME.fullmatch(run):
            path = paths.run_dir(run) / "log"
        else:
            self._json(400, {"error": "give a log name (iteration-N.log) or a run id"})
            return
        try:
            text = read_tail(path, LOG_TAIL, own_folder=True).decode("utf-8", "replace")
            if not text and not path.exists():
                text = f"(no log at {path})"
        except OSError as exc:
            text = f"({path}: {exc.strerror})"
        except RefusedWriteError as exc:  # a link planted at the log: never served through
            text = f"({exc})"
        self._json(200, {"file": str(path), "text": text})

    def _stream(self) -> None:
        hub = self.server.app.hub
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        seen: int | None = hub.version
        try:
            self.wfile.write(f"retry: 1000\nid: {seen}\ndata: {seen}\n\n".encode())
            self.wfile.flush()
            while seen is not None and (seen := hub.wait_after(seen)) is not None:
                self.wfile.write(f"id: {seen}\ndata: {seen}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            return  # the page went away


class Dashboard:
    """One dashboard: the server, its watchers and its token; `start` binds, `stop` ends all.

    `projects` maps a display name to a state folder (`wild.serve.projects`); a WildPaths
    alone is one project. Every watcher bumps the one hub: a change anywhere makes the page
    read its project again.
    """

    def __init__(
        self,
        projects: WildPaths | Mapping[str, WildPaths],
        clock: Clock,
        *,
        port: int = DEFAULT_PORT,
        token: str | None = None,
        request_deadline: float = REQUEST_DEADLINE_S,
    ) -> None:
        if isinstance(projects, WildPaths):
            projects = {projects.root.resolve().parent.name: projects}
        self.projects = dict(projects)
        self.clock = clock
        # Each project's parses, kept while its files stand (a change re-parses that file
        # alone); one lock each, since the server answers requests on threads of their own.
        self.caches = {name: (threading.Lock(), ParseCache()) for name in self.projects}
        self.hub = Hub()
        self._server = _Server(("127.0.0.1", port), _Handler, bind_and_activate=False)
        # The webhook's server design; every page holds an event stream open besides its
        # requests, all from 127.0.0.1, so the caps are wider.
        limits = ConnectionLimits(total=MAX_CONNECTIONS, per_client=MAX_CONNECTIONS)
        refusals = RefusalLog(log.debug, name="dashboard")
        self._server.guard = Guard(limits, refusals, request_deadline)
        self.access = Access(token or new_token(), port)
        self._watches = [LiveWatch(paths, self.hub) for paths in self.projects.values()]
        self._thread: threading.Thread | None = None
        self._wake: tuple[int, int] | None = None  # a pipe whose write end ends `_serve`

    @property
    def port(self) -> int:
        return self.access.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.access.token}"

    def start(self) -> None:
        """Bind (port 0: any free one), start watching and serving on threads of their own."""
        self._server.app = self
        self._server.server_bind()
        self._server.server_activate()
        self.access = replace(self.access, port=self._server.server_address[1])
        for watch in self._watches:
            watch.start()
        self._wake = os.pipe()
        self._thread = threading.Thread(
            target=self._serve, args=(self._wake[0],), name="wild-serve", daemon=True
        )
        self._thread.start()

    def _serve(self, stop: int) -> None:
        """Accept connections until `stop` turns readable: blocked in select, no wake-ups
        while idle (`serve_forever` would wake twice a second to look for a shutdown)."""
        listening = self._server.fileno()
        while True:
            ready, _, _ = select.select([listening, stop], [], [])
            if stop in ready:
                return
            self._server.handle_request()  # ready: accepts at once, a thread per request

    def stop(self) -> None:
        for watch in self._watches:
            watch.stop()
        self.hub.close()  # open event streams end
        if self._wake is not None:
            os.write(self._wake[1], b"x")
        if self._thread is not None:
            self._thread.join(STOP_S)  # a daemon thread: bounded, so Ctrl-C always ends
        self._server.server_close()
        if self._wake is not None:
            for fd in self._wake:
                os.close(fd)
            self._wake = None

    def __enter__(self) -> Dashboard:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
