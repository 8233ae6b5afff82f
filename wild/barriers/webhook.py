"""The loopback webhook: an authenticated 127.0.0.1 endpoint to satisfy a barrier or add an alert.

Any local process, and through DNS rebinding any web page the user visits, can reach a
loopback port, so every request must carry a bearer token or a GitHub-style HMAC of its raw
body; `Host` must name the loopback address (this is what defeats DNS rebinding), and a
request with an `Origin` header came from a browser and is refused. Nothing from a payload is
ever executed: it only becomes a status change or an alert record.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import re
import socket
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from wild.clock import Clock, SystemClock, iso
from wild.errors import WildError
from wild.parsers import alerts
from wild.parsers.barriers import find, parse, set_status
from wild.parsers.severity import is_severity, listed
from wild.paths import WildPaths
from wild.store.alerts_log import append_alert
from wild.store.files import read_text, update_text

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
READ_TIMEOUT_S = 10.0  # a client that stalls mid-request must not hold a thread forever
DELIVERIES_KEPT = 1024
DELIVERY_HEADERS = ("X-GitHub-Delivery", "X-Request-Id")
_SATISFY = re.compile(r"/barriers/([^/]+)/satisfy")

Reply = tuple[int, dict[str, Any]]


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
    ) -> None:
        if not token and not secret:
            raise WildError(
                "the webhook needs a bearer token or an HMAC secret; configure one, then start it"
            )
        self._paths = paths
        self._token = token.encode() if token else None
        self._secret = secret or None
        self._port = port
        self._max_body = max_body
        self._wake = wake
        self._clock: Clock = clock or SystemClock()
        self._on_written = on_written
        self._deliveries: OrderedDict[str, None] = OrderedDict()
        # One request changes state at a time: dedupe + write must not interleave.
        self._lock = threading.Lock()
        self._hosts: frozenset[str] = frozenset()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> int:
        """Bind 127.0.0.1 and serve from a background thread; returns the bound port."""
        server = _Server((HOST, self._port), _Handler)
        server.app = self
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
        """Check, authenticate and serve one POST; every refusal is a status and a reason."""
        try:
            # The (capped) body is read first even for requests refused below: closing a socket
            # with unread data resets it, and the client would never see why it was refused.
            body = self._read_body(handler)
            route = self._screen(handler.headers, handler.path)
            if not self._authorized(handler.headers, body):
                raise _Refused(
                    401, "missing or wrong Authorization bearer token or X-Hub-Signature-256"
                )
            with self._lock:
                delivery = _delivery_id(handler.headers)
                if delivery is not None and delivery in self._deliveries:
                    return 200, {"ok": True, "duplicate": True}
                reply = self._dispatch(route, body)
                if delivery is not None:
                    self._remember(delivery)
                return reply
        except _Refused as refused:
            return refused.status, {"error": str(refused)}

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
        body = handler.rfile.read(length)
        if len(body) != length:
            raise _Refused(400, "the body ended before its Content-Length")
        return body

    def _authorized(self, headers: Message, body: bytes) -> bool:
        """Bearer token or HMAC-SHA256 of the raw body, both compared in constant time."""
        if self._token is not None:
            scheme, _, given = (headers.get("Authorization") or "").partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(
                _ascii(given.strip()), self._token
            ):
                return True
        if self._secret is not None:
            expected = "sha256=" + hmac.new(self._secret, body, hashlib.sha256).hexdigest()
            given = (headers.get("X-Hub-Signature-256") or "").strip()
            if hmac.compare_digest(_ascii(given), expected.encode()):
                return True
        return False

    def _remember(self, delivery: str) -> None:
        self._deliveries[delivery] = None
        while len(self._deliveries) > DELIVERIES_KEPT:
            self._deliveries.popitem(last=False)

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


def _ascii(text: str) -> bytes:
    # Header values arrive latin-1 decoded; bytes let compare_digest take any of them.
    return text.encode("utf-8", "surrogateescape")


def _delivery_id(headers: Message) -> str | None:
    for name in DELIVERY_HEADERS:
        value = headers.get(name)
        if value:
            return f"{name.lower()}:{value.strip()}"
    return None


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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    app: WebhookServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-request is routine; never spray tracebacks on the user's terminal.
        log.debug("webhook request from %s failed", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = READ_TIMEOUT_S
    server_version = "wild-webhook"
    sys_version = ""

    def do_POST(self) -> None:
        try:
            status, payload = self.server.app.respond(self)
        except Exception:  # a full disk or a lock timeout: report, keep serving
            log.exception("webhook request failed")
            status, payload = 500, {"error": "wild could not record this request; see its log"}
        self._reply(status, payload)

    def _not_allowed(self) -> None:
        self._reply(405, {"error": "only POST is served"})

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = _not_allowed

    def _reply(self, status: int, payload: Mapping[str, Any]) -> None:
        data = orjson.dumps(payload) + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        # An unread body (413, early refusals) must not be parsed as the next request.
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("webhook: " + format, *args)
