"""`.wild/webhook-seen.jsonl` as bytes: the webhook ids spent within the replay window.

One `{"key": …, "until": unix-seconds}` object a line. A key is spent until its `until`; a
torn or malformed line is skipped (it costs only itself). Keeping the file is
`wild.barriers.webhook_seen`.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from wild.parsers.jsonl import loads, split_complete_lines


def encode(key: str, until: float) -> bytes:
    """One line (with its newline)."""
    return orjson.dumps({"key": key, "until": until}, option=orjson.OPT_APPEND_NEWLINE)


def parse(data: bytes) -> dict[str, float]:
    """Every key with the latest `until` given for it; garbage lines are skipped."""
    spent: dict[str, float] = {}
    lines, _ = split_complete_lines(data)
    for raw in lines:
        try:
            record = loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        key, until = record.get("key"), record.get("until")
        if isinstance(key, str) and isinstance(until, int | float) and not isinstance(until, bool):
            spent[key] = max(float(until), spent.get(key, float("-inf")))
    return spent


def live(spent: Mapping[str, float], now: float) -> dict[str, float]:
    """The keys still inside their window at `now`."""
    return {key: until for key, until in spent.items() if until >= now}


def render(spent: Mapping[str, float]) -> bytes:
    """The whole file for these keys, in the given order."""
    return b"".join(encode(key, until) for key, until in spent.items())
