"""The HTTP side of the webhook: http.server's threading server with wild's guards fitted.

Each connection is admitted under the caps before a thread is started for it, reads its
request under one deadline, and a refused or dropped client costs one report line.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

import orjson

from wild.barriers.webhook_guard import ConnectionLimits, DeadlineReader, RefusalLog

log = logging.getLogger("wild.barriers.webhook")

Reply = tuple[int, dict[str, Any]]


class Dropped(Exception):
    """The client sent no complete request in time, or hung up: no reply, one report line."""


class WebhookApp(Protocol):
    """What the HTTP side needs from the webhook."""

    request_deadline: float
    limits: ConnectionLimits
    refusals: RefusalLog

    def respond(self, handler: BaseHTTPRequestHandler) -> Reply:
        """The reply to one POST; raises `Dropped` when there is no one to reply to."""
        ...


def _client(address: Any) -> str:
    """`host:port` of a peer, for report lines."""
    return f"{address[0]}:{address[1]}"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    app: WebhookApp

    def verify_request(self, request: Any, client_address: Any) -> bool:
        # Runs on the accepting thread before any handler thread exists: a connection over
        # the caps is closed at once and costs no thread.
        refusal = self.app.limits.admit(str(client_address[0]))
        if refusal is None:
            return True
        self.app.refusals.refused(_client(client_address), refusal)
        return False

    def process_request(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started (none left?): its slot is free again
            self.app.limits.release(str(client_address[0]))
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.app.limits.release(str(client_address[0]))

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-request is routine; never spray tracebacks on the user's terminal.
        log.debug("webhook request from %s failed", client_address, exc_info=True)


class Handler(BaseHTTPRequestHandler):
    server: Server
    server_version = "wild-webhook"
    sys_version = ""

    def setup(self) -> None:
        app = self.server.app
        super().setup()
        # http.server reads the request line, headers and body from rfile; one deadline
        # for all of it, not a timeout per receive that a trickling client renews forever.
        self.rfile.close()
        self._reader = DeadlineReader(self.connection, app.request_deadline)
        self.rfile = io.BufferedReader(self._reader)
        self._dropped: str | None = None

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            reason = self._dropped
            if self._reader.expired:
                reason = f"no complete request within {self._reader.seconds:g} s"
            if reason is not None:
                self.server.app.refusals.refused(_client(self.client_address), reason)

    def do_POST(self) -> None:
        try:
            status, payload = self.server.app.respond(self)
        except Dropped as dropped:
            self._dropped = str(dropped)
            self.close_connection = True
            return
        except Exception as exc:  # a full disk or a lock timeout: one line, keep serving
            log.debug("webhook request failed", exc_info=True)
            status, payload = 500, {"error": f"wild could not record this request: {exc}"}
        self._reply(status, payload)

    def _not_allowed(self) -> None:
        self._reply(405, {"error": "only POST is served"})

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = _not_allowed

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # http.server's own refusals (a malformed request line, too many headers …).
        self.server.app.refusals.refused(_client(self.client_address), f"{code} {message or ''}")
        super().send_error(code, message, explain)

    def _reply(self, status: int, payload: Mapping[str, Any]) -> None:
        if status >= 400:
            reason = f"{status} {payload.get('error', '')}"
            self.server.app.refusals.refused(_client(self.client_address), reason)
        data = orjson.dumps(payload) + b"\n"
        # The reply gets its own allowance: the read deadline may have almost run out.
        self.connection.settimeout(self.server.app.request_deadline)
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
