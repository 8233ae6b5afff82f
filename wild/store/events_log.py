"""`.wild/events.log` on disk: the loop's appender, and reading the whole log back.

The line format is `wild.parsers.events_log`.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wild.clock import Clock, iso_ms
from wild.errors import WildError
from wild.parsers.events_log import check_event_data, encode_event, parse_events
from wild.parsers.lines import Problem
from wild.store.jsonl import KeptAppender, append_lines


class EventLog:
    """Appends events; safe to share between threads and to run in several processes at once.

    The file stays open between appends (`KeptAppender`: each append still checks the path
    as a fresh open would) until `close`; a log that is never closed holds one descriptor
    until the process ends."""

    def __init__(self, path: Path, clock: Clock) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._appender = KeptAppender(path)
        self._last_ms = 0
        self._counter = 0
        # Lines given their ids and held (`hold`, `append_all(held=True)`), written first by
        # the next write (`flush`, `close`).
        self._held: list[bytes] = []

    def _next_id(self) -> tuple[str, str]:
        """A fresh `(id, ts)`; call with the lock held."""
        now = self._clock.now()
        # The wall clock may step back (NTP) or be a frozen test clock: never let ids go back.
        self._last_ms = max(self._last_ms, int(now.timestamp() * 1000))
        self._counter += 1
        # The pid tells processes apart; the zero-padded counter keeps ids of one process
        # unique and sorting in the order they were made.
        return f"evt-{self._last_ms}-{os.getpid()}-{self._counter:06d}", iso_ms(now)

    def append(self, kind: str, *, cause: str | None = None, **data: Any) -> str:
        """Write one event and return its id, so later events can name it as their cause."""
        return self._one(kind, cause, data, held=False)

    def hold(self, kind: str, *, cause: str | None = None, **data: Any) -> str:
        """`append`, but the line is written with the next write (`flush`); its id is
        given now."""
        return self._one(kind, cause, data, held=True)

    def _one(self, kind: str, cause: str | None, data: dict[str, Any], *, held: bool) -> str:
        check_event_data(data)
        with self._lock:
            event_id, ts = self._next_id()
            self._write([encode_event(event_id, ts, kind, cause, data)], held=held)
        return event_id

    def append_all(
        self,
        events: Sequence[tuple[str, dict[str, Any]]],
        *,
        causes: Sequence[str | None] = (),
        held: bool = False,
    ) -> None:
        """Write several events (kind, data) with one append: a step that starts many runs
        pays for one write, not one each. `causes`: each event's cause, in order (none past
        its end). `held`: written with the next write, as `append`'s."""
        for _kind, data in events:
            check_event_data(data)
        with self._lock:
            lines = []
            for index, (kind, data) in enumerate(events):
                event_id, ts = self._next_id()
                cause = causes[index] if index < len(causes) else None
                lines.append(encode_event(event_id, ts, kind, cause, data))
            self._write(lines, held=held)

    def flush(self) -> None:
        """Write the held lines now, if any."""
        with self._lock:
            self._write([])

    def _write(self, lines: list[bytes], *, held: bool = False) -> None:
        """Append the held lines and `lines` in one write, or hold `lines` too; call with the
        lock held, so that, within one process, file order is id order. Held lines that
        fail to be written are not written again: as a line whose own append failed."""
        if held:
            self._held += lines
            return
        if self._held:
            lines, self._held = [*self._held, *lines], []
        if lines:
            append_lines(self.path, lines, self._appender)

    def close(self) -> None:
        """Write the held lines, then close the kept file; a later append opens it again. A
        failure to write them is not raised here: closing follows the loop's own end or error,
        which would be hidden (an append that fails is said by its caller)."""
        with self._lock:
            try:
                with contextlib.suppress(OSError, WildError):
                    self._write([])
            finally:
                self._appender.close()


def read_events(path: Path) -> tuple[list[dict[str, Any]], list[Problem]]:
    """All events in file order; torn and malformed lines are skipped and reported, never fatal."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], []
    return parse_events(data, str(path))
