"""The alerts summary as data: what a read command needs of alerts.jsonl, kept small.

A read command (`wild --status`, `--list-work`, …) needs only the alerts still open, the
problems found in the file's lines, and how far the file was read. The summary holds exactly
that, so reading 100,000 mostly resolved alerts costs what reading the few open ones and the
lines appended since costs. Pure: `wild.store.alerts_summary` reads, checks and writes it.

Open alerts are kept in the order they became open (first line of the id, or the line that
reopened a resolved one): the order `AlertIndex` gives them, so a summary read and a full
read agree exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import orjson

from wild.parsers.alerts import STATUSES, Alert, parse_entry
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.lines import Problem
from wild.parsers.severity import SEVERITIES
from wild.record import record

# Bumped whenever the meaning of a field changes: a summary of another version is rebuilt.
VERSION = 1


@record
class AlertSummary:
    """alerts.jsonl up to `cursor`: its open alerts and the problems in its complete lines.

    `problems` name no file: the summary outlives a renamed folder, so the reader names it.
    """

    cursor: AlertCursor
    open: tuple[Alert, ...]
    problems: tuple[tuple[int, str], ...]  # (line, message), in file order

    def problems_in(self, file: str) -> tuple[Problem, ...]:
        return tuple(Problem(file, line, message) for line, message in self.problems)


def empty(cursor: AlertCursor) -> AlertSummary:
    return AlertSummary(cursor, (), ())


def advance(
    summary: AlertSummary,
    entries: Iterable[Alert],
    problems: Iterable[Problem],
    cursor: AlertCursor,
) -> AlertSummary:
    """The summary once the complete lines holding `entries` and `problems` are read too."""
    still_open = {alert.id: alert for alert in summary.open}
    for alert in entries:
        if alert.status == "resolved":
            still_open.pop(alert.id, None)
        else:
            still_open[alert.id] = alert  # an open id keeps its place; a new one goes last
    found = tuple((p.line, p.message) for p in problems)
    return AlertSummary(cursor, tuple(still_open.values()), summary.problems + found)


def counts(alerts: Iterable[Alert]) -> dict[str, dict[str, int]]:
    """Open alerts by status and by severity, every name present (zero when none)."""
    listed = list(alerts)
    by_status = Counter(a.status for a in listed)
    by_severity = Counter(a.severity for a in listed)
    return {
        "status": {name: by_status[name] for name in STATUSES if name != "resolved"},
        "severity": {name: by_severity[name] for name in SEVERITIES},
    }


def encode_summary(summary: AlertSummary) -> bytes:
    """The summary file's bytes; `counts` are for other readers (wild recounts)."""
    data = {
        "version": VERSION,
        "cursor": summary.cursor.to_json(),
        "counts": counts(summary.open),
        "open": [{"line": a.line, "alert": dict(a.raw)} for a in summary.open],
        "problems": [[line, message] for line, message in summary.problems],
    }
    return orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)


def _open_alert(entry: object) -> Alert | None:
    if not isinstance(entry, dict):
        return None
    line, raw = entry.get("line"), entry.get("alert")
    if not isinstance(line, int) or not _count(line) or not isinstance(raw, dict):
        return None
    alert, _ = parse_entry(orjson.dumps(raw), line)  # its problems are in the list already
    return alert if alert is not None and alert.status != "resolved" else None


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _problem(entry: object) -> tuple[int, str] | None:
    if isinstance(entry, list) and len(entry) == 2:
        line, message = entry
        if _count(line) and isinstance(message, str):
            return line, message
    return None


def decode_summary(data: bytes) -> AlertSummary | None:
    """The summary the bytes hold; None for anything unusable (then it is rebuilt)."""
    try:
        obj: Any = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or obj.get("version") != VERSION:
        return None
    cursor = AlertCursor.from_json(obj.get("cursor"))
    entries, problems = obj.get("open"), obj.get("problems")
    if cursor is None or not isinstance(entries, list) or not isinstance(problems, list):
        return None
    alerts = [_open_alert(entry) for entry in entries]
    lines = [_problem(entry) for entry in problems]
    if None in alerts or None in lines:
        return None
    if len({a.id for a in alerts if a is not None}) != len(alerts):
        return None
    return AlertSummary(
        cursor,
        tuple(a for a in alerts if a is not None),
        tuple(p for p in lines if p is not None),
    )
