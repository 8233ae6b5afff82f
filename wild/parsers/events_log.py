"""`.wild/events.log` as bytes: one JSON event a line, each with its own id and the id of its cause.

Appending and reading the file is `wild.store.events_log`. `agent_spans` reads from the events
when wild's agents ran (whose word a change of the human's files is: `wild.policy.trust`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import orjson

from wild.clock import parse_time
from wild.output import escape_undecodable
from wild.parsers.jsonl import loads, split_complete_lines
from wild.parsers.lines import Problem
from wild.record import record

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
            parsed = loads(raw)
        except ValueError:
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


@record
class AgentSpan:
    """When one agent of wild ran, as events.log records it. `end` None: no end recorded and
    no loop started since (it runs now, or its loop was killed and none has started again)."""

    start: datetime
    end: datetime | None


def agent_spans(events: Iterable[Mapping[str, Any]]) -> tuple[AgentSpan, ...]:
    """Each `agent-start` paired with the `agent-end` that names it as its cause. A start with
    no end ran at most until the next `loop-start`: a new loop kills what a killed one left
    running before any work, so what happened before it may still be the agent's."""
    spans: list[AgentSpan] = []
    running: dict[str, datetime] = {}
    for event in events:
        ts = event.get("ts")
        at = parse_time(ts) if isinstance(ts, str) else None
        if at is None:
            continue
        kind = event.get("kind")
        if kind == "agent-start":
            running[str(event.get("id"))] = at
        elif kind == "agent-end":
            start = running.pop(str(event.get("cause")), None)
            if start is not None:
                spans.append(AgentSpan(start, at))
        elif kind == "loop-start":
            spans.extend(AgentSpan(start, at) for start in running.values())
            running.clear()
    spans.extend(AgentSpan(start, None) for start in running.values())
    return tuple(spans)
