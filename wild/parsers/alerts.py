"""alerts.jsonl as text: parse alert lines, encode new ones, index their latest state.

What appended bytes hold, where a reader got to and which lines compaction moves are
`wild.parsers.alerts_file`; reading, appending and compacting the file are `wild.store`.

The file is append-only JSONL; the state of an alert is its latest line in file order (not
the latest timestamp: clocks of jobs on other hosts disagree, file order does not). A status
change is a new line with the same id. Jobs, webhooks and agents append without wild's lock.

Decisions on tolerant reading (each reported as a `Problem`, the alert still used):
- a line that is not JSON, not an object, or has no non-empty string "id" is skipped;
- missing or unknown "severity" counts as "warning": an alert whose urgency we cannot read
  must neither page the human as critical nor sink below every info alert ("warn" and any
  letter case are accepted silently);
- missing "status" means "pending" (a job raising an alert need not say so, not reported);
  an unknown status counts as "pending" so the alert is looked at rather than dropped;
- a field of the wrong JSON type is replaced by its JSON text (strings) or ignored (context,
  choices entries are stringified); `raw` always keeps the line's object as written.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping
from dataclasses import field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

import orjson

from wild.clock import iso
from wild.errors import WildError
from wild.parsers.jsonl import loads, trailing_object_start
from wild.parsers.lines import Problem
from wild.parsers.oversize import LONGEST_VALUE_CHARS, shrink
from wild.parsers.severity import SEVERITIES, Severity, is_severity, listed
from wild.record import record

AlertStatus = Literal["pending", "in-progress", "resolved", "escalated"]
STATUSES: tuple[AlertStatus, ...] = get_args(AlertStatus)

FILE = "alerts.jsonl"
MAX_LINE_BYTES = 1 << 20
INCOMPLETE = "incomplete last line, waiting for the writer to finish it"
_SNIPPET_CHARS = 200

_QUOTE = '"'
_SEVERITY_NAMES: dict[str, Severity] = {**{name: name for name in SEVERITIES}, "warn": "warning"}
_STATUS_NAMES: dict[str, AlertStatus] = {name: name for name in STATUSES}


@record(slots=True)
class Alert:
    """The state one alerts.jsonl line gives an alert; `line` is its 1-based line number."""

    id: str
    timestamp: str
    severity: Severity
    source: str
    type: str
    description: str
    status: AlertStatus
    context: Mapping[str, Any] = field(hash=False)
    resolved_at: str | None
    escalated_at: str | None
    choices: tuple[str, ...]
    raw: Mapping[str, Any] = field(hash=False)
    line: int


# ---------------------------------------------------------------------------------- parsing


def _snippet(data: bytes) -> str:
    text = data.rstrip(b"\r\n").decode("utf-8", "backslashreplace")
    return text if len(text) <= _SNIPPET_CHARS else text[:_SNIPPET_CHARS] + "…"


def _json_text(value: object) -> str:
    return orjson.dumps(value).decode()


def _text(obj: Mapping[str, Any], key: str, notes: list[str]) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    notes.append(f'"{key}" should be a string, used its JSON text {_json_text(value)}')
    return _json_text(value)


def _severity(obj: Mapping[str, Any], notes: list[str]) -> Severity:
    value = obj.get("severity")
    if isinstance(value, str):
        # exact spelling first: it is what nearly every line has, and the cheapest lookup
        name = _SEVERITY_NAMES.get(value) or _SEVERITY_NAMES.get(value.strip().lower())
        if name is not None:
            return name
    what = 'no "severity"' if value is None else f"unknown severity {_json_text(value)}"
    notes.append(f'{what}, treated as "warning"; use {listed(quote=_QUOTE)}')
    return "warning"


def _status(obj: Mapping[str, Any], notes: list[str]) -> AlertStatus:
    value = obj.get("status")
    if value is None:
        return "pending"
    if isinstance(value, str):
        status = _STATUS_NAMES.get(value)
        if status is None:
            status = _STATUS_NAMES.get(value.strip().lower().replace("_", "-").replace(" ", "-"))
        if status is not None:
            return status
    notes.append(
        f'unknown status {_json_text(value)}, treated as "pending"; '
        'use "pending", "in-progress", "resolved" or "escalated"'
    )
    return "pending"


def _context(obj: Mapping[str, Any], notes: list[str]) -> Mapping[str, Any]:
    value = obj.get("context")
    if isinstance(value, dict):
        return types.MappingProxyType(value)
    if value is not None:
        notes.append('"context" should be an object, ignored')
    return types.MappingProxyType({})


def _choices(obj: Mapping[str, Any], notes: list[str]) -> tuple[str, ...]:
    value = obj.get("choices")
    if value is None:
        return ()
    if not isinstance(value, list):
        notes.append('"choices" should be a list of strings, ignored')
        return ()
    if not all(isinstance(choice, str) for choice in value):
        notes.append('"choices" should hold only strings, used the JSON text of the others')
    return tuple(c if isinstance(c, str) else _json_text(c) for c in value)


def _skipped(
    file: str, line_no: int, data: bytes, what: str, fix: str
) -> tuple[None, tuple[Problem, ...]]:
    return None, (Problem(file, line_no, f"{what}, skipped; {fix}: {_snippet(data)}"),)


def _after_fragment(
    data: bytes, line_no: int, file: str
) -> tuple[Alert | None, tuple[Problem, ...]] | None:
    """The alert a writer appended onto the fragment a dead writer left on this line, if any.

    The fragment is reported, never fatal; the object after it is read as a line of its own.
    One case bytes cannot settle: a lone fragment cut right after a nested object that has an
    "id" reads like a fragment cut after `"key":` with an alert glued on. It is read as an
    alert: a spurious alert, shown with its fragment, costs less than a lost critical one.
    """
    start = trailing_object_start(data, MAX_LINE_BYTES)
    if not start:
        return None
    # Scanning the rest again stops at its own start (0), so this recurses only once.
    alert, problems = parse_entry(data[start:], line_no, file)
    if alert is None:
        return None  # not JSON, or no "id": the whole line is reported as it is
    fragment = Problem(
        file,
        line_no,
        f"a writer's unfinished line, skipped; the line appended after it was read: "
        f"{_snippet(data[:start])}",
    )
    return alert, (fragment, *problems)


def _fits(obj: dict[str, Any]) -> bool:
    try:
        data = orjson.dumps(obj, default=_jsonable, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return True  # not JSON at all: encode_alert says so
    return len(data) <= MAX_LINE_BYTES


def parse_entry(
    data: bytes, line_no: int, file: str = FILE
) -> tuple[Alert | None, tuple[Problem, ...]]:
    """One line's alert (None when unusable) and the problems found in it; never raises."""
    if not data or data.isspace():
        return None, (Problem(file, line_no, "empty line, skipped"),)
    try:
        obj = loads(data)
    except ValueError:
        return _after_fragment(data, line_no, file) or _skipped(
            file, line_no, data, "not valid JSON", "fix or delete the line"
        )
    if not isinstance(obj, dict):
        return _skipped(
            file, line_no, data, "not a JSON object", "each line must be one alert object"
        )
    notes: list[str] = []
    if len(data) > MAX_LINE_BYTES:
        obj = shrink(obj, _fits)
        notes.append(
            f"the line is {len(data)} bytes, over the {MAX_LINE_BYTES}-byte limit; wild uses it "
            f"with values cut to {LONGEST_VALUE_CHARS} characters (the file keeps them whole); "
            "put large output in a file and name it in the context"
        )
    alert_id = obj.get("id")
    if not isinstance(alert_id, str) or not alert_id.strip():
        return _skipped(file, line_no, data, 'no "id"', 'give the alert a unique string "id"')
    alert = Alert(
        id=alert_id,
        timestamp=_text(obj, "timestamp", notes) or "",
        severity=_severity(obj, notes),
        source=_text(obj, "source", notes) or "",
        type=_text(obj, "type", notes) or "",
        description=_text(obj, "description", notes) or "",
        status=_status(obj, notes),
        context=_context(obj, notes),
        resolved_at=_text(obj, "resolvedAt", notes),
        escalated_at=_text(obj, "escalatedAt", notes),
        choices=_choices(obj, notes),
        raw=types.MappingProxyType(obj),
        line=line_no,
    )
    if not notes:
        return alert, ()
    return alert, tuple(Problem(file, line_no, f"alert {alert_id}: {note}") for note in notes)


# ---------------------------------------------------------------------------------- writing


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode_alert(record: Mapping[str, Any]) -> bytes:
    """One alerts.jsonl line (with its "\\n"); WildError for records no reader could use."""
    alert_id = record.get("id")
    if not isinstance(alert_id, str) or not alert_id.strip():
        raise WildError(
            'an alert needs a non-empty string "id"; build it with make_alert() or new_alert_id()'
        )
    try:
        data = orjson.dumps(record, default=_jsonable, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError as err:
        raise WildError(
            f"alert {alert_id}: cannot be written as JSON ({err}); "
            "use strings, numbers, booleans, lists and objects"
        ) from None
    if len(data) > MAX_LINE_BYTES:
        raise WildError(
            f"alert {alert_id}: the line would be {len(data)} bytes, over the "
            f"{MAX_LINE_BYTES}-byte limit; put large output in a file and name it in the context"
        )
    return data


def new_alert_id(clock_now: datetime) -> str:
    """`alert-YYYYMMDD-HHMMSS-xxxx`: unique without reading the file (4 random hex digits)."""
    import secrets  # noqa: PLC0415  (with hmac and OpenSSL, ~3 ms: only a new alert needs it)

    return f"alert-{clock_now.astimezone(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _check_status(status: str) -> None:
    if status not in STATUSES:
        raise WildError(
            f"unknown alert status {status!r}; use pending, in-progress, resolved or escalated"
        )


def make_alert(
    *,
    now: datetime,
    severity: Severity,
    source: str,
    type: str,
    description: str,
    context: Mapping[str, Any] | None = None,
    choices: Iterable[str] = (),
    alert_id: str | None = None,
) -> dict[str, Any]:
    """A new pending alert record in the seed's field order (context/choices only if given)."""
    if not is_severity(severity):
        raise WildError(f"unknown severity {severity!r}; use {listed()}")
    record: dict[str, Any] = {
        "id": alert_id or new_alert_id(now),
        "timestamp": iso(now),
        "severity": severity,
        "source": source,
        "type": type,
        "description": description,
        "status": "pending",
    }
    if context:
        record["context"] = dict(context)
    chosen = list(choices)
    if chosen:
        record["choices"] = chosen
    return record


def status_update(
    alert: Alert | Mapping[str, Any], status: AlertStatus, now: datetime, **extra: Any
) -> dict[str, Any]:
    """The next line for an alert: same fields, new status and timestamp (seed 001).

    in-progress bumps `context.attempt`; resolved sets `resolvedAt`, escalated `escalatedAt`;
    a stale `resolvedAt` is dropped when an alert is reopened. `extra` fields win.
    """
    _check_status(status)
    record = dict(alert.raw if isinstance(alert, Alert) else alert)
    stamp = iso(now)
    record["status"] = status
    record["timestamp"] = stamp
    record.pop("resolvedAt", None)
    if status == "resolved":
        record["resolvedAt"] = stamp
    elif status == "escalated":
        record["escalatedAt"] = stamp
    elif status == "in-progress":
        old = record.get("context")
        context = dict(old) if isinstance(old, Mapping) else {}
        attempt = context.get("attempt")
        if isinstance(attempt, int) and not isinstance(attempt, bool):
            context["attempt"] = attempt + 1
        else:
            context["attempt"] = 1
        record["context"] = context
    record.update(extra)
    # wild's own line must always be writable: the job's line may be near the size limit, a
    # human's guidance or an agent's resolution long; else every loop start would stop here.
    return record if _fits(record) else shrink(record, _fits)


# ---------------------------------------------------------------------------------- index


class AlertIndex:
    """Latest state of every alert id, in the order the alerts became open: file order of
    the id's first line, except that an alert reopened after it was resolved moves to the
    end, as a new alert would (so the open alerts' order can be kept without remembering
    every resolved id: `wild.parsers.alerts_summary`)."""

    def __init__(self, entries: Iterable[Alert] = ()) -> None:
        self._latest: dict[str, Alert] = {}
        self.apply(entries)

    def apply(self, entries: Iterable[Alert]) -> tuple[Alert, ...]:
        """Take entries in file order; returns the new state of each alert they changed."""
        changed: dict[str, Alert] = {}
        latest = self._latest
        for alert in entries:
            before = latest.get(alert.id)
            was_resolved = before is not None and before.status == "resolved"
            if was_resolved and alert.status != "resolved":
                del latest[alert.id]  # reopened: goes last, like a new alert
            latest[alert.id] = alert  # an existing key keeps its place in the dict
            changed[alert.id] = alert
        return tuple(changed.values())

    def get(self, alert_id: str) -> Alert | None:
        return self._latest.get(alert_id)

    def active(self) -> tuple[Alert, ...]:
        """Alerts still to be dealt with: every one whose latest state is not resolved."""
        return tuple(a for a in self._latest.values() if a.status != "resolved")

    def all(self) -> tuple[Alert, ...]:
        return tuple(self._latest.values())

    def __len__(self) -> int:
        return len(self._latest)


def changed_for_the_loop(before: Alert | None, after: Alert) -> bool:
    """Whether an alert's new state is news: line numbers move when the file is compacted,
    so only the content says it changed."""
    return before is None or before.raw != after.raw
