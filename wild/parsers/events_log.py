"""`.wild/events.log` as bytes: one JSON event a line, each with its own id and the id of its cause.

Appending and reading the file is `wild.store.events_log`.
"""

from __future__ import annotations

from typing import Any

import orjson

from wild.output import escape_undecodable
from wild.parsers.jsonl import split_complete_lines
from wild.parsers.lines import Problem

RESERVED = frozenset({"id", "ts", "kind", "cause"})


def _fallback(value: object) -> object:
    """Paths, sets and other odd values are logged as text: an event must never crash the loop."""
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def check_event_data(data: dict[str, Any]) -> None:
    """ValueError when `data` would overwrite a field every event has."""
    clash = RESERVED & data.keys()
    if clash:
        raise ValueError(f"event data may not use the reserved key(s) {sorted(clash)}")


def encode_event(
    event_id: str, ts: str, kind: str, cause: str | None, data: dict[str, Any]
) -> bytes:
    """One events.log line (with its newline); `data` may not use the reserved keys."""
    check_event_data(data)
    record = {"id": event_id, "ts": ts, "kind": kind, "cause": cause, **data}
    try:
        return orjson.dumps(record, default=_fallback, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # text with bytes that are not UTF-8 (a goal, a file's line)
        record = escape_undecodable(record)
        return orjson.dumps(record, default=_fallback, option=orjson.OPT_APPEND_NEWLINE)


def parse_events(data: bytes, file: str) -> tuple[list[dict[str, Any]], list[Problem]]:
    """All events in order; torn and malformed lines are skipped and reported, never fatal."""
    lines, covered = split_complete_lines(data)
    events: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            problems.append(Problem(file, number, "not valid JSON; skipped"))
            continue
        if not isinstance(parsed, dict):
            problems.append(Problem(file, number, "not a JSON object; skipped"))
            continue
        events.append(parsed)
    if data[covered:].strip():
        problems.append(
            Problem(
                file,
                len(lines) + 1,
                "incomplete last line (still being written, or cut off by a crash); skipped",
            )
        )
    return events, problems
