"""`.wild/control`: how `wild --pause | --resume | --stop` from another terminal reach the loop."""

from __future__ import annotations

import os
import threading

import orjson

from wild.clock import Clock, SystemClock, iso_ms
from wild.errors import UsageError, WildError
from wild.parsers.control import COMMANDS, ControlRequest, parse_request
from wild.parsers.jsonl import split_complete_lines
from wild.paths import WildPaths
from wild.store.jsonl import append_line


def request(
    paths: WildPaths, command: str, clock: Clock | None = None, target: str | None = None
) -> ControlRequest:
    """Append one request; the loop's folder watcher wakes it at once.

    One `os.write` on an O_APPEND descriptor, so two terminals writing together never mix lines.
    """
    if command not in COMMANDS:
        raise UsageError(f"unknown control command {command!r}; use one of: {', '.join(COMMANDS)}")
    if not paths.root.is_dir():
        raise WildError(f"{paths.root}: no state folder here; run `wild --init` or pass --dir")
    sent = ControlRequest(command, iso_ms((clock or SystemClock()).now()), target)
    line = {"command": sent.command, "ts": sent.ts}
    append_line(paths.control, orjson.dumps(line if target is None else {**line, "target": target}))
    return sent


def end_offset(paths: WildPaths) -> int:
    """Where a loop starting now begins reading: requests made before it started are stale."""
    try:
        return os.stat(paths.control).st_size
    except FileNotFoundError:
        return 0


def read_pending(paths: WildPaths, offset: int) -> tuple[tuple[ControlRequest, ...], int]:
    """Requests in complete lines after byte `offset`, and the offset to read from next time.

    A line still being written is left for the next call; a line that is not a request
    (only `request` writes this file) is skipped. A file shorter than `offset` was truncated
    or replaced, so it is read from the start.
    """
    try:
        with open(paths.control, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < offset:
                offset = 0
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return (), 0
    lines, used = split_complete_lines(data)
    found = (parse_request(line) for line in lines)
    return tuple(item for item in found if item is not None), offset + used


class ControlInbox:
    """Requests that reached the running loop, read when the watcher reports the control file
    changed (on the watcher's thread): a stop also sets `stop` at once, so a running agent is
    cancelled without anyone polling the file."""

    def __init__(self, paths: WildPaths, stop: threading.Event) -> None:
        self._paths = paths
        self._stop = stop
        self._lock = threading.Lock()
        self._offset = end_offset(paths)  # requests made before the loop started are stale
        self._pending: list[ControlRequest] = []

    def on_change(self) -> None:
        with self._lock:
            found, self._offset = read_pending(self._paths, self._offset)
            self._pending.extend(found)
        if any(item.command == "stop" for item in found):
            self._stop.set()

    def take(self) -> tuple[ControlRequest, ...]:
        """The requests made since the last call, oldest first. The file is read here too: a
        request written just before the loop decides counts even when the watcher's event has
        not reached the loop yet (a busy machine delays it; a pause must not be one iteration
        late)."""
        with self._lock:
            found, self._offset = read_pending(self._paths, self._offset)
            taken, self._pending = (*self._pending, *found), []
        return taken
