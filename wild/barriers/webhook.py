"""The loopback webhook: an authenticated 127.0.0.1 endpoint to satisfy a barrier or add an alert.

Any local process, and through DNS rebinding any web page the user visits, can reach a
loopback port, so every request must carry a bearer token or a timestamped HMAC signature
(`wild.barriers.webhook_auth` decides; spent signatures and delivery ids are kept in
`.wild/` so a replay is refused even after a restart); `Host` must name the loopback address
(this is what defeats DNS rebinding), and a request with an `Origin` header came from a
browser and is refused. Slow and greedy clients meet a deadline per request and connection
caps (`wild.http_guard`, the server the dashboard uses too). Nothing from a payload is ever
executed: it only becomes a status change or an alert record.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import threading
from collections.abc import Callable, Mapping
from email.message import Message
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from wild.barriers import webhook_auth
from wild.barriers.webhook_auth import Credentials, Duplicate, Refuse
from wild.barriers.webhook_http import Dropped, Handler, Reply, Server
from wild.barriers.webhook_seen import SeenIds
from wild.clock import Clock, SystemClock, iso
from wild.errors import WildError
from wild.http_guard import (
    MAX_CONNECTIONS,
    MAX_PER_CLIENT,
    REQUEST_DEADLINE_S,
    ConnectionLimits,
    Guard,
    RefusalLog,
)
from wild.parsers import alerts
from wild.parsers.barriers import find, parse, set_status
from wild.parsers.severity import is_severity, listed
from wild.paths import WildPaths
from wild.store.alerts_log import append_alert
from wild.store.files import read_text, update_text

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
_SATISFY = re.compile(r"/barriers/([^/]+)/satisfy")


class _Refused(Exception):
    """A request we answer with an error status; the text goes back as `{"error": ...}`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class WebhookServer:
    """Serves `POST /barriers/<id>/satisfy` and `POST /alerts` on 127.0.0.1 only."""

    def __init__(
        self,
        paths: WildPaths,
        *,
        token: str | None,
        secret: bytes | None,
        port: int = 0,
        max_body: int = MAX_BODY,
        wake: Callable[[str], None],
        clock: Clock | None = None,
        on_written: Callable[[Path, bytes], None] | None = None,
        tolerance: float = webhook_auth.TOLERANCE_S,
        request_deadline: float = REQUEST_DEADLINE_S,
        max_connections: int = MAX_CONNECTIONS,
        max_per_client: int = MAX_PER_CLIENT,
        report: Callable[[str], None] = log.info,
    ) -> None:
        if not token and not secret:
            raise WildError(
                "the webhook needs a bearer token or an HMAC secret; configure one, then start it"
            )
        self._paths = paths
        self._credentials = Credentials(
            token=token.encode() if token else None, secret=secret or None
        )
        self._port = port
        self._max_body = max_body
        self._wake = wake
        self._clock: Clock = clock or SystemClock()
        self._on_written = on_written
        self._tolerance = tolerance
        self.request_deadline = request_deadline
        self.limits = ConnectionLimits(max_connections, max_per_client)
        self.refusals = RefusalLog(report)
        self._seen: SeenIds | None = None
        # One request changes state at a time: the replay check, the spend and the write
        # must not interleave.
        self._lock = threading.Lock()
        self._hosts: frozenset[str] = frozenset()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> int:
        """Bind 127.0.0.1 and serve from a background thread; returns the bound port."""
        self._seen = SeenIds(self._paths.webhook_seen, self._now())
        server = Server((HOST, self._port), Handler)
        server.app = self
        server.guard = Guard(self.limits, self.refusals, self.request_deadline)
        port = server.server_address[1]
        self._hosts = frozenset({f"{HOST}:{port}", f"localhost:{port}"})
        self._server = server
        self._thread = threading.Thread(
            # No poll interval: an idle server blocks in select() and never wakes up.
            target=server.serve_forever,
            kwargs={"poll_interval": None},
            name="wild-webhook",
            daemon=True,
        )
        self._thread.start()
        return port

    @property
    def address(self) -> tuple[str, int]:
        """The bound (host, port); host is always 127.0.0.1."""
        if self._server is None:
            raise WildError("the webhook is not running; start it first")
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def stop(self) -> None:
        """Stop serving and close the port; requests being handled finish first."""
        server = self._server
        if server is None:
            return
        stopper = threading.Thread(target=server.shutdown, name="wild-webhook-stop")
        stopper.start()
        # serve_forever only sees the shutdown flag when select() returns: connect to it
        # until it has (a connection that lands before the flag is set just loops once).
        while stopper.is_alive():
            with contextlib.suppress(OSError):
                socket.create_connection(self.address, timeout=1.0).close()
            stopper.join(0.05)
        server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = None
        self._thread = None

    # -- one request -------------------------------------------------------------------

    def respond(self, handler: BaseHTTPRequestHandler) -> Reply:
        """Check, authenticate and serve one POST; every refusal is a status and a reason.

        Raises `Dropped` when the client sent no complete request in time (or hung up).
        """
        try:
            # The (capped) body is read first even for requests refused below: closing a socket
            # with unread data resets it, and the client would never see why it was refused.
            body = self._read_body(handler)
            route = self._screen(handler.headers, handler.path)
            headers: dict[str, str] = {}
            for name, value in handler.headers.items():
                # The first of a repeated header counts, as `Message.get` would have it.
                headers.setdefault(name.lower(), value)
            with self._lock:
                return self._decide_and_act(route, body, headers)
        except _Refused as refused:
            return refused.status, {"error": str(refused)}

    def _decide_and_act(self, route: str, body: bytes, headers: Mapping[str, str]) -> Reply:
        seen = self._seen
        if seen is None:
            raise WildError("the webhook is not running; start it first")
        now = self._now()
        verdict = webhook_auth.verify(
            body, headers, self._credentials, now=now, seen=seen, tolerance=self._tolerance
        )
        if isinstance(verdict, Refuse):
            raise _Refused(verdict.status, verdict.reason)
        if isinstance(verdict, Duplicate):
            return 200, {"ok": True, "duplicate": True}
        seen.spend(((s.key, s.until) for s in verdict.spend_now), now)
        reply = self._dispatch(route, body)
        seen.spend(((s.key, s.until) for s in verdict.spend_when_done), now)
        return reply

    def _now(self) -> float:
        return self._clock.now().timestamp()

    def _screen(self, headers: Message, path: str) -> str:
        """Refuse browsers, rebinding hosts and unknown endpoints before authenticating."""
        if headers.get("Origin") is not None:
            raise _Refused(403, "requests with an Origin header (from a browser) are refused")
        host = (headers.get("Host") or "").strip().lower()
        if host not in self._hosts:
            raise _Refused(403, f"Host must be {HOST}:PORT or localhost:PORT")
        route = urlsplit(path).path
        if route != "/alerts" and _SATISFY.fullmatch(route) is None:
            raise _Refused(404, "unknown endpoint; use POST /barriers/<id>/satisfy or POST /alerts")
        return route

    def _read_body(self, handler: BaseHTTPRequestHandler) -> bytes:
        """The raw body, refused unread when it announces more than the cap."""
        if handler.headers.get("Transfer-Encoding") is not None:
            raise _Refused(411, "send the body with a Content-Length, not chunked")
        raw = handler.headers.get("Content-Length") or "0"
        if not raw.strip().isdigit():
            raise _Refused(400, "Content-Length must be a number")
        length = int(raw)
        if length > self._max_body:
            raise _Refused(413, f"body of {length} bytes is over the {self._max_body}-byte limit")
        try:
            body = handler.rfile.read(length)
        except OSError as exc:  # the deadline passed (TimeoutError) or the client hung up
            raise Dropped(str(exc) or type(exc).__name__) from exc
        if len(body) != length:
            raise _Refused(400, "the body ended before its Content-Length")
        return body

    def _dispatch(self, route: str, body: bytes) -> Reply:
        match = _SATISFY.fullmatch(route)
        if match is not None:
            return self._satisfy(unquote(match.group(1)))
        return self._alert(body)

    def _satisfy(self, barrier_id: str) -> Reply:
        barrier = find(parse(read_text(self._paths.barriers)), barrier_id)
        if barrier is None:
            raise _Refused(404, f"no barrier {barrier_id!r} in barriers.md")
        if barrier.type != "webhook":
            raise _Refused(
                409,
                f"barrier {barrier_id} is {barrier.type}, not webhook; "
                "only its own check can satisfy it",
            )
        if barrier.status == "satisfied":
            return 200, {"ok": True, "barrier": barrier_id, "changed": False}
        at = iso(self._clock.now())

        def edit(text: str) -> str:
            current = find(parse(text), barrier_id)
            if current is None or current.type != "webhook":
                return text  # removed or retyped by a human meanwhile
            return set_status(text, barrier_id, "satisfied", at=at)

        update_text(
            self._paths.barriers,
            edit,
            self._paths.lock,
            on_written=self._written(self._paths.barriers),
        )
        self._wake(barrier_id)
        return 200, {"ok": True, "barrier": barrier_id, "changed": True}

    def _alert(self, body: bytes) -> Reply:
        fields = _alert_fields(body)
        record = alerts.make_alert(now=self._clock.now(), **fields)
        append_alert(self._paths.alerts, record)
        alert_id = str(record["id"])
        self._wake(alert_id)
        return 200, {"ok": True, "alert": alert_id}

    def _written(self, path: Path) -> Callable[[bytes], None] | None:
        on_written = self._on_written
        return None if on_written is None else (lambda data: on_written(path, data))


def _text_field(data: Mapping[str, Any], name: str, *, default: str | None = None) -> str:
    value = data.get(name, default)
    if not isinstance(value, str) or not value.strip():
        raise _Refused(400, f"alert field {name!r} must be a non-empty string")
    return value


def _alert_fields(body: bytes) -> dict[str, Any]:
    """The known alert fields of a JSON body, validated; anything else in it is ignored."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise _Refused(400, f"body is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _Refused(400, "body must be a JSON object")
    severity = data.get("severity")
    if not is_severity(severity):
        raise _Refused(400, f"alert field 'severity' must be {listed()}")
    context = data.get("context", {})
    if not isinstance(context, dict):
        raise _Refused(400, "alert field 'context' must be a JSON object")
    choices = data.get("choices", [])
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise _Refused(400, "alert field 'choices' must be a list of strings")
    return {
        "severity": severity,
        "source": _text_field(data, "source", default="webhook"),
        "type": _text_field(data, "type"),
        "description": _text_field(data, "description"),
        "context": context,
        "choices": tuple(choices),
    }
