"""The events log's tail for the page, with a text search and an errors-only filter."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from wild.errors import RefusedWriteError
from wild.parsers.events_log import parse_events
from wild.record import record
from wild.store.write_guard import open_own_file
from wild.tail import tail_of

TAIL_BYTES = 512 * 1024  # the page searches the log's latest half megabyte
ERROR_KINDS = frozenset(
    {"io-error", "write-refused", "notify-failed", "stalled", "signal-problems", "backoff"}
)


@record
class EventFilter:
    """`text`: a case-insensitive substring of the event's JSON; `errors`: only failures."""

    text: str = ""
    errors: bool = False
    limit: int = 200


def is_error(event: dict[str, Any]) -> bool:
    """An event that reports something going wrong."""
    if event.get("kind") in ERROR_KINDS or event.get("error"):
        return True
    if event.get("kind") == "agent-end":
        failed = event.get("exit_code") not in (0, None) or event.get("timed_out")
        return bool(failed or event.get("is_error"))
    return False


def read_tail(path: Path, most: int = TAIL_BYTES, *, own_folder: bool = False) -> bytes:
    """The file's last `most` bytes, starting at a line; b"" when it does not exist. A link
    at its name leading out of the project (or, `own_folder`, any link there or in place of
    its folder) is refused (RefusedWriteError): the dashboard shows no file through a link
    an agent planted."""
    try:
        with os.fdopen(open_own_file(path, os.O_RDONLY, own_folder=own_folder), "rb") as handle:
            return tail_of(handle, most)
    except FileNotFoundError:
        return b""


def select(events: list[dict[str, Any]], wanted: EventFilter) -> list[dict[str, Any]]:
    """The newest matching events, newest first, at most `limit`."""
    needle = wanted.text.lower()
    chosen = []
    for event in reversed(events):
        if wanted.errors and not is_error(event):
            continue
        if needle and needle not in orjson.dumps(event).decode().lower():
            continue
        chosen.append(event)
        if len(chosen) >= wanted.limit:
            break
    return chosen


def events_tail(path: Path, wanted: EventFilter) -> dict[str, Any]:
    try:
        data = read_tail(path)
    except RefusedWriteError as refused:  # events.log linked out of the project: not shown
        return {"rows": [], "problems": [str(refused)]}
    events, problems = parse_events(data, str(path))
    rows = [
        {
            "ts": e.get("ts"),
            "kind": e.get("kind"),
            "error": is_error(e),
            "text": orjson.dumps(
                {k: v for k, v in e.items() if k not in ("id", "ts", "kind", "cause")}
            ).decode()[:2000],
        }
        for e in select(events, wanted)
    ]
    return {"rows": rows, "problems": [str(p) for p in problems]}
