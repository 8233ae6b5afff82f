"""What keeps slow or greedy webhook clients from hurting the loop: a deadline on reading each
request, caps on open connections (per client address and in total), and one rate-limited
line per refused client instead of a traceback."""

from __future__ import annotations

import io
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

REQUEST_DEADLINE_S = 10.0
MAX_CONNECTIONS = 32
MAX_PER_CLIENT = 8
REPORT_BURST = 10
REPORT_WINDOW_S = 60.0


class ConnectionLimits:
    """Counts open connections; `admit` says why a new one is refused, or None to serve it."""

    def __init__(self, total: int = MAX_CONNECTIONS, per_client: int = MAX_PER_CLIENT) -> None:
        self._total = total
        self._per_client = per_client
        self._open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def admit(self, client: str) -> str | None:
        with self._lock:
            if self._open[client] >= self._per_client:
                return f"{self._per_client} connections from it are open already"
            if self._open.total() >= self._total:
                return f"{self._total} connections are open already"
            self._open[client] += 1
            return None

    def release(self, client: str) -> None:
        with self._lock:
            self._open[client] -= 1
            if self._open[client] <= 0:
                del self._open[client]

    def open_now(self) -> int:
        with self._lock:
            return self._open.total()


@dataclass(frozen=True)
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
        burst: int = REPORT_BURST,
        window: float = REPORT_WINDOW_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._report = report
        self._monotonic = monotonic
        self._bucket = Bucket(burst, window, float(burst), monotonic())
        self._lock = threading.Lock()

    def refused(self, client: str, reason: str) -> None:
        with self._lock:
            self._bucket, ok, held_back = admit_line(self._bucket, self._monotonic())
        if ok:
            more = f" ({held_back} more refused before this one)" if held_back else ""
            self._report(f"webhook: refused {client}: {reason}{more}")


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
