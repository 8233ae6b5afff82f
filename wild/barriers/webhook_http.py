"""The HTTP side of the webhook: wild's one hardened server (`wild.http_guard`, which the
dashboard uses too) answering POSTs with JSON."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

import orjson

from wild.http_guard import ConnectionLimits, GuardedHandler, GuardedServer, RefusalLog

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


class Server(GuardedServer):
    app: WebhookApp


class Handler(GuardedHandler):
    server: Server
    server_version = "wild-webhook"
    sys_version = ""

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
