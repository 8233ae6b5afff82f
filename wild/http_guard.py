"""The one hardened HTTP server wild runs, for the webhook and the dashboard alike: a thread per
connection, a deadline on reading each request, caps on open connections (per client address
and in total), and one rate-limited line per refused client instead of a traceback.

Both servers listen on 127.0.0.1, where every client has the same address; so a cap that is
reached does not lock the next client out: the connection that has been sending its request
the longest (a slowloris client) is dropped to make room. Only when every open connection is
already being answered is a newcomer refused.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from wild.record import record, replace

log = logging.getLogger("wild.http_guard")

REQUEST_DEADLINE_S = 10.0
MAX_CONNECTIONS = 32
MAX_PER_CLIENT = 8
REPORT_BURST = 10
REPORT_WINDOW_S = 60.0


@dataclass
class _Open:
    """One open connection: whose, and whether it is still sending its request."""

    client: str
    sock: socket.socket | None
    opened: float
    reading: bool = True


class ConnectionLimits:
    """Counts open connections. `admit` makes room under a cap by dropping the connection that
    has been sending its request the longest, and says why a new one is refused when none is."""

    def __init__(self, total: int = MAX_CONNECTIONS, per_client: int = MAX_PER_CLIENT) -> None:
        self._total = total
        self._per_client = per_client
        self._open: list[_Open] = []
        self._dropped: list[str] = []
        self._lock = threading.Lock()

    def admit(self, client: str, sock: socket.socket | None = None) -> str | None:
        """None when the connection may be served (a slow one may have been dropped for it),
        else why not. Say the drop through `dropped()`."""
        with self._lock:
            mine = [c for c in self._open if c.client == client]
            if len(mine) >= self._per_client:
                scope, full = mine, f"{self._per_client} connections from it are open already"
            elif len(self._open) >= self._total:
                scope, full = self._open, f"{self._total} connections are open already"
            else:
                scope, full = [], None
            if full is not None:
                slow = [c for c in scope if c.reading and c.sock is not None]
                if not slow:
                    return full
                oldest = min(slow, key=lambda c: c.opened)
                self._open.remove(oldest)
                self._dropped.append(oldest.client)
                _hang_up(oldest.sock)
            self._open.append(_Open(client, sock, time.monotonic()))
            return None

    def dropped(self) -> list[str]:
        """The clients whose slow connections were dropped to make room since the last call."""
        with self._lock:
            gone, self._dropped = self._dropped, []
            return gone

    def answering(self, sock: socket.socket) -> None:
        """The connection's request is read: it is being answered and is no longer dropped."""
        with self._lock:
            for conn in self._open:
                if conn.sock is sock:
                    conn.reading = False

    def release(self, client: str, sock: socket.socket | None = None) -> None:
        with self._lock:
            for conn in self._open:
                if conn.client == client and (sock is None or conn.sock is sock):
                    self._open.remove(conn)
                    return

    def open_now(self) -> int:
        with self._lock:
            return len(self._open)


def _hang_up(sock: socket.socket | None) -> None:
    """End a connection another thread is reading: its read returns at once, empty."""
    if sock is None:
        return
    with contextlib.suppress(OSError):  # already gone
        sock.shutdown(socket.SHUT_RDWR)


@record
class Bucket:
    """A token bucket: `burst` lines at once, refilled at `burst` per `window` seconds."""

    burst: int
    window: float
    tokens: float
    at: float
    held_back: int = 0


def admit_line(bucket: Bucket, now: float) -> tuple[Bucket, bool, int]:
    """The bucket after one more line is asked for at `now`, whether the line may be written,
    and (when it may) how many lines were held back before it."""
    refill = (now - bucket.at) * bucket.burst / bucket.window
    tokens = min(float(bucket.burst), bucket.tokens + max(refill, 0.0))
    if tokens < 1:
        return replace(bucket, tokens=tokens, at=now, held_back=bucket.held_back + 1), False, 0
    return replace(bucket, tokens=tokens - 1, at=now, held_back=0), True, bucket.held_back


class RefusalLog:
    """One line per refused client, at most `burst` per `window` seconds; the next line that
    gets through says how many were held back, so a flood is visible but cannot flood."""

    def __init__(
        self,
        report: Callable[[str], None],
        *,
        name: str = "webhook",
        burst: int = REPORT_BURST,
        window: float = REPORT_WINDOW_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._report = report
        self._name = name
        self._monotonic = monotonic
        self._bucket = Bucket(burst, window, float(burst), monotonic())
        self._lock = threading.Lock()

    def refused(self, client: str, reason: str) -> None:
        with self._lock:
            self._bucket, ok, held_back = admit_line(self._bucket, self._monotonic())
        if ok:
            more = f" ({held_back} more refused before this one)" if held_back else ""
            self._report(f"{self._name}: refused {client}: {reason}{more}")


class DeadlineReader(io.RawIOBase):
    """Reads a socket until a fixed instant: each receive may wait only for the time left, so a
    client trickling a byte at a time cannot stretch one request past the deadline."""

    def __init__(self, sock: socket.socket, seconds: float) -> None:
        super().__init__()
        self._sock = sock
        self.seconds = seconds
        self._deadline = time.monotonic() + seconds
        self.expired = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        left = self._deadline - time.monotonic()
        if left > 0:
            self._sock.settimeout(left)
            try:
                return self._sock.recv_into(buffer)
            except TimeoutError:
                pass
        self.expired = True
        raise TimeoutError(f"no complete request within {self.seconds:g} s")


def _client(address: Any) -> str:
    """`host:port` of a peer, for report lines."""
    return f"{address[0]}:{address[1]}"


@record
class Guard:
    """What one server is held to: its caps, its report line, its request deadline."""

    limits: ConnectionLimits
    refusals: RefusalLog
    request_deadline: float = REQUEST_DEADLINE_S


class GuardedServer(ThreadingHTTPServer):
    """http.server's threading server under a `Guard`: each connection is admitted under the
    caps before a thread is started for it; a refused or dropped client costs one line."""

    daemon_threads = True
    guard: Guard

    def verify_request(self, request: Any, client_address: Any) -> bool:
        # Runs on the accepting thread before any handler thread exists: a connection over
        # the caps is closed at once and costs no thread.
        refusal = self.guard.limits.admit(str(client_address[0]), request)
        for client in self.guard.limits.dropped():
            self.guard.refusals.refused(client, "dropped: still sending its request when full")
        if refusal is None:
            return True
        self.guard.refusals.refused(_client(client_address), refusal)
        return False

    def process_request(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started (none left?): its slot is free again
            self.guard.limits.release(str(client_address[0]), request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.guard.limits.release(str(client_address[0]), request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-request is routine; never spray tracebacks on the terminal.
        log.debug("request from %s failed", client_address, exc_info=True)


class GuardedHandler(BaseHTTPRequestHandler):
    """Reads each request under one deadline, and reports a client dropped at it."""

    server: GuardedServer

    def setup(self) -> None:
        super().setup()
        # http.server reads the request line, headers and body from rfile; one deadline
        # for all of it, not a timeout per receive that a trickling client renews forever.
        self.rfile.close()
        self._reader = DeadlineReader(self.connection, self.server.guard.request_deadline)
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
                self.server.guard.refusals.refused(_client(self.client_address), reason)

    def send_response(self, code: int, message: str | None = None) -> None:
        # Answering: no longer a slow client to drop, and the reply gets its own allowance
        # (the read deadline may have almost run out).
        self.server.guard.limits.answering(self.connection)
        self.connection.settimeout(self.server.guard.request_deadline)
        super().send_response(code, message)
