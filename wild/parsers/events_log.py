"""`.wild/events.log`: one JSON event a line, each with its own id and the id of its cause."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import orjson

from wild.clock import Clock, iso_ms
from wild.parsers.jsonl import split_complete_lines
from wild.parsers.lines import Problem
from wild.store.jsonl import append_line

_RESERVED = frozenset({"id", "ts", "kind", "cause"})


def _fallback(value: object) -> object:
    """Paths, sets and other odd values are logged as text: an event must never crash the loop."""
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


class EventLog:
    """Appends events; safe to share between threads and to run in several processes at once."""

    def __init__(self, path: Path, clock: Clock) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._last_ms = 0
        self._counter = 0

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
        clash = _RESERVED & data.keys()
        if clash:
            raise ValueError(f"event data may not use the reserved key(s) {sorted(clash)}")
        with self._lock:
            event_id, ts = self._next_id()
            record = {"id": event_id, "ts": ts, "kind": kind, "cause": cause, **data}
            line = orjson.dumps(record, default=_fallback, option=orjson.OPT_APPEND_NEWLINE)
            # Written under the lock so that, within one process, file order is id order.
            append_line(self.path, line)
        return event_id


def read_events(path: Path) -> tuple[list[dict[str, Any]], list[Problem]]:
    """All events in file order; torn and malformed lines are skipped and reported, never fatal."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], []
    name = str(path)
    lines, covered = split_complete_lines(data)
    events: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            problems.append(Problem(name, number, "not valid JSON; skipped"))
            continue
        if not isinstance(parsed, dict):
            problems.append(Problem(name, number, "not a JSON object; skipped"))
            continue
        events.append(parsed)
    if data[covered:].strip():
        problems.append(
            Problem(
                name,
                len(lines) + 1,
                "incomplete last line (still being written, or cut off by a crash); skipped",
            )
        )
    return events, problems
