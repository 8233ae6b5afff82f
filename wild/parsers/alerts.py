"""alerts.jsonl: parse alert lines, append them safely, read new ones by byte offset, compact.

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

import fcntl
import os
import secrets
import time
import types
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

import orjson

from wild import store
from wild.clock import iso
from wild.errors import WildError
from wild.parsers.jsonl import append_bytes, split_complete_lines
from wild.parsers.lines import Problem
from wild.parsers.severity import SEVERITIES, Severity, is_severity, listed

AlertStatus = Literal["pending", "in-progress", "resolved", "escalated"]
STATUSES: tuple[AlertStatus, ...] = get_args(AlertStatus)

FILE = "alerts.jsonl"
MAX_LINE_BYTES = 1 << 20
INCOMPLETE = "incomplete last line, waiting for the writer to finish it"
# Bytes hashed at the start of the file and just before the cursor: an in-place rewrite, a
# truncate-and-refill or a reused inode number changes them even when size and inode agree.
FINGERPRINT_BYTES = 64
_SNIPPET_CHARS = 200
# A line still being written by a writer that takes no lock usually completes within a
# millisecond; compaction waits at most this long before carrying it over as it is.
_SETTLE_S = 0.001
_SETTLE_ATTEMPTS = 20

_QUOTE = '"'
_SEVERITY_NAMES: dict[str, Severity] = {**{name: name for name in SEVERITIES}, "warn": "warning"}
_STATUS_NAMES: dict[str, AlertStatus] = {name: name for name in STATUSES}


@dataclass(frozen=True, slots=True)
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


def parse_entry(
    data: bytes, line_no: int, file: str = FILE
) -> tuple[Alert | None, tuple[Problem, ...]]:
    """One line's alert (None when unusable) and the problems found in it; never raises."""
    if not data or data.isspace():
        return None, (Problem(file, line_no, "empty line, skipped"),)
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _skipped(file, line_no, data, "not valid JSON", "fix or delete the line")
    if not isinstance(obj, dict):
        return _skipped(
            file, line_no, data, "not a JSON object", "each line must be one alert object"
        )
    alert_id = obj.get("id")
    if not isinstance(alert_id, str) or not alert_id.strip():
        return _skipped(file, line_no, data, 'no "id"', 'give the alert a unique string "id"')
    notes: list[str] = []
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


def append_alert(path: Path | str, record: Mapping[str, Any]) -> None:
    """Append one alert line; safe against concurrent appenders and a running compaction."""
    data = encode_alert(record)
    try:
        append_bytes(Path(path), data)
    except OSError as err:
        raise WildError(
            f"{path}: cannot append the alert ({err.strerror}); "
            "check that the folder exists and is writable"
        ) from None


def new_alert_id(clock_now: datetime) -> str:
    """`alert-YYYYMMDD-HHMMSS-xxxx`: unique without reading the file (4 random hex digits)."""
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
    return record


# --------------------------------------------------------------------------------- reading


def _fingerprint(fd: int, start: int, end: int) -> str:
    return store.content_hash(os.pread(fd, end - start, start))


@dataclass(frozen=True)
class AlertCursor:
    """How far alerts.jsonl was read, and which file that was (for `alertsFilePosition`)."""

    dev: int
    ino: int
    offset: int  # just past the last complete line consumed
    line_count: int  # complete lines consumed, so problems name the right line
    head: str  # hash of the first ≤64 bytes
    tail: str  # hash of the ≤64 bytes before `offset`

    @classmethod
    def of(cls, fd: int, st: os.stat_result, offset: int, line_count: int) -> AlertCursor:
        head = _fingerprint(fd, 0, min(FINGERPRINT_BYTES, offset))
        tail = _fingerprint(fd, max(0, offset - FINGERPRINT_BYTES), offset)
        return cls(st.st_dev, st.st_ino, offset, line_count, head, tail)

    def continues(self, fd: int, st: os.stat_result) -> bool:
        """Whether the open file is the one this cursor read, grown only by appends."""
        return (
            (st.st_dev, st.st_ino) == (self.dev, self.ino)
            and st.st_size >= self.offset
            and _fingerprint(fd, 0, min(FINGERPRINT_BYTES, self.offset)) == self.head
            and _fingerprint(fd, max(0, self.offset - FINGERPRINT_BYTES), self.offset) == self.tail
        )

    def to_json(self) -> dict[str, int | str]:
        return {
            "dev": self.dev,
            "ino": self.ino,
            "offset": self.offset,
            "lineCount": self.line_count,
            "head": self.head,
            "tail": self.tail,
        }

    @classmethod
    def from_json(cls, value: object) -> AlertCursor | None:
        """The cursor stored in state.json; None (meaning: read from the start) if unusable.

        The seed's bare integer position carries no file identity, so it is not trusted.
        """
        if not isinstance(value, dict):
            return None
        numbers = [value.get(key) for key in ("dev", "ino", "offset", "lineCount")]
        counts = [n for n in numbers if isinstance(n, int) and not isinstance(n, bool) and n >= 0]
        head, tail = value.get("head"), value.get("tail")
        if len(counts) != 4 or not isinstance(head, str) or not isinstance(tail, str):
            return None
        dev, ino, offset, line_count = counts
        return cls(dev, ino, offset, line_count, head, tail)


_NO_FILE = AlertCursor(0, 0, 0, 0, store.content_hash(b""), store.content_hash(b""))


@dataclass(frozen=True)
class ReadResult:
    """What `read_new` found; `reset` means the file is not the one the cursor read."""

    entries: tuple[Alert, ...]
    problems: tuple[Problem, ...]
    cursor: AlertCursor
    reset: bool


def _pread_all(fd: int, start: int, end: int | None = None) -> bytes:
    """Bytes from `start` to `end` (or to EOF), in chunks: pread caps one call near 2 GiB."""
    chunks: list[bytes] = []
    pos = start
    while end is None or pos < end:
        want = 1 << 30 if end is None else min(end - pos, 1 << 30)
        chunk = os.pread(fd, want, pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return b"".join(chunks)


def _parse_lines(
    lines: list[bytes], first_line_no: int, file: str
) -> Iterator[tuple[int, bytes, Alert | None, tuple[Problem, ...]]]:
    for line_no, data in enumerate(lines, start=first_line_no):
        if not data or data.isspace():
            continue  # blank lines (e.g. from sealing a torn line) carry nothing
        alert, problems = parse_entry(data, line_no, file)
        yield line_no, data, alert, problems


def read_new(
    path: Path | str, cursor: AlertCursor | None, *, file: str | None = None
) -> ReadResult:
    """Alerts appended since `cursor` (all of them when None), in O(new bytes).

    Problems name `file` (default: the file's bare name), as the other parsers' do.

    Only complete lines are consumed; a torn last line is reported and read again next
    time. A truncated, replaced, compacted or rewritten file gives reset=True and is read
    from the start.
    """
    path = Path(path)
    had_data = cursor is not None and cursor.offset > 0
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return ReadResult((), (), _NO_FILE, reset=had_data)
    try:
        st = os.fstat(fd)  # the file we read, not whatever the name points at by now
        keep = cursor is not None and cursor.continues(fd, st)
        start, base = (cursor.offset, cursor.line_count) if keep and cursor else (0, 0)
        lines, consumed = split_complete_lines(_pread_all(fd, start, st.st_size))
        entries: list[Alert] = []
        problems: list[Problem] = []
        shown = file if file is not None else path.name
        for _, _, alert, found in _parse_lines(lines, base + 1, shown):
            if alert is not None:
                entries.append(alert)
            problems.extend(found)
        if start + consumed < st.st_size:
            problems.append(Problem(shown, base + len(lines) + 1, INCOMPLETE))
        new_cursor = AlertCursor.of(fd, st, start + consumed, base + len(lines))
    finally:
        os.close(fd)
    return ReadResult(tuple(entries), tuple(problems), new_cursor, reset=had_data and not keep)


class AlertIndex:
    """Latest state of every alert id, in file order of the id's first appearance."""

    def __init__(self, entries: Iterable[Alert] = ()) -> None:
        self._latest: dict[str, Alert] = {}
        self.apply(entries)

    def apply(self, entries: Iterable[Alert]) -> tuple[Alert, ...]:
        """Take entries in file order; returns the new state of each alert they changed."""
        changed: dict[str, Alert] = {}
        for alert in entries:
            self._latest[alert.id] = alert  # an existing key keeps its place in the dict
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


class AlertLog:
    """alerts.jsonl as the loop sees it: an index kept current by incremental reads.

    `since` is the cursor saved in state.json by an earlier run: the first refresh still
    reads the whole file (the index needs every alert) but reports as changed only the
    alerts whose latest line came after it, if it still describes this file.
    """

    def __init__(self, path: Path | str, since: AlertCursor | None = None) -> None:
        self.path = Path(path)
        self.index = AlertIndex()
        self._since = since
        self._cursor: AlertCursor | None = None
        self._line_problems: list[Problem] = []
        self._tail_problems: tuple[Problem, ...] = ()

    @property
    def cursor(self) -> AlertCursor | None:
        """What to save as `alertsFilePosition` once the changed alerts were handled."""
        return self._cursor

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Every unusable or odd line in the file as last read, plus a torn last line."""
        return (*self._line_problems, *self._tail_problems)

    def refresh(self) -> tuple[Alert, ...]:
        """Read what was appended; returns the alerts whose state changed."""
        first = self._cursor is None
        result = read_new(self.path, self._cursor)
        self._cursor = result.cursor
        lines_read = result.cursor.line_count
        self._tail_problems = tuple(p for p in result.problems if p.line > lines_read)
        complete = [p for p in result.problems if p.line <= lines_read]
        if result.reset:
            old, self.index = self.index, AlertIndex(result.entries)
            self._line_problems = complete
            return tuple(a for a in self.index.all() if _differs(old.get(a.id), a))
        self._line_problems.extend(complete)
        changed = self.index.apply(result.entries)
        since, self._since = self._since, None
        if first and since is not None and self._still_describes(since):
            return tuple(a for a in changed if a.line > since.line_count)
        return changed

    def _still_describes(self, since: AlertCursor) -> bool:
        """Whether a stored cursor is a prefix of the file this log has just read."""
        now = self._cursor
        if now is None or (since.dev, since.ino) != (now.dev, now.ino):
            return False
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            return since.offset <= now.offset and since.continues(fd, os.fstat(fd))
        finally:
            os.close(fd)


def _differs(before: Alert | None, after: Alert) -> bool:
    # Line numbers move when the file is compacted; only the content says it changed.
    return before is None or before.raw != after.raw


# ------------------------------------------------------------------------------ compaction


@dataclass(frozen=True)
class CompactionReport:
    """What `compact` did; all zero when nothing was resolved."""

    archived_alerts: int  # ids whose lines left alerts.jsonl
    archived_lines: int  # lines appended to the archive now
    already_archived: int  # lines an interrupted earlier compaction had already archived
    kept_lines: int  # complete lines alerts.jsonl holds afterwards
    carried_lines: int  # lines others appended during the compaction, carried over


@dataclass(frozen=True)
class _Plan:
    keep: tuple[bytes, ...]
    archive: tuple[bytes, ...]
    archived_ids: int
    end: int  # bytes covered by the complete lines planned


def _plan(data: bytes, file: str) -> _Plan:
    """Split complete lines into those of resolved alerts and the rest (kept byte for byte)."""
    lines, end = split_complete_lines(data)
    owner: dict[int, str] = {}
    latest: dict[str, AlertStatus] = {}
    for index, _, alert, _ in _parse_lines(lines, 0, file):
        if alert is not None:
            owner[index] = alert.id
            latest[alert.id] = alert.status
    resolved = {alert_id for alert_id, status in latest.items() if status == "resolved"}
    moving = {i for i, alert_id in owner.items() if alert_id in resolved}
    return _Plan(
        keep=tuple(line for i, line in enumerate(lines) if i not in moving),
        archive=tuple(line for i, line in enumerate(lines) if i in moving),
        archived_ids=len(resolved),
        end=end,
    )


def _archive_tail(archive_path: Path, size: int) -> Counter[bytes]:
    """Complete lines in the last `size` bytes of the archive.

    Only compaction writes the archive, under wild's lock, so lines an interrupted
    compaction appended are at its very end, and they are a subset of what we archive now
    (resolved alerts stay resolved), so a window of our block's size holds all of them.
    """
    try:
        fd = os.open(archive_path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return Counter()
    try:
        total = os.fstat(fd).st_size
        start = max(0, total - size - 1)
        data = _pread_all(fd, start, total)
    finally:
        os.close(fd)
    if start > 0:
        data = data[data.find(b"\n") + 1 :]  # the window may begin inside a line
    return Counter(split_complete_lines(data)[0])


def _append_archive(archive_path: Path, lines: tuple[bytes, ...]) -> tuple[int, int]:
    """Append lines not already at the archive's end, durably; (appended, skipped)."""
    present = _archive_tail(archive_path, sum(len(line) + 1 for line in lines))
    todo: list[bytes] = []
    for line in lines:
        if present[line] > 0:
            present[line] -= 1
        else:
            todo.append(line)
    if todo:
        # fsync before alerts.jsonl loses these lines, or a power cut could lose them both.
        append_bytes(archive_path, b"".join(line + b"\n" for line in todo), durable=True)
    return len(todo), len(lines) - len(todo)


def _read_settled(fd: int, start: int) -> bytes:
    """Bytes from `start` to EOF, waiting briefly for a line being written to be finished."""
    data = _pread_all(fd, start)
    for _ in range(_SETTLE_ATTEMPTS):
        if not data or data.endswith(b"\n"):
            break
        time.sleep(_SETTLE_S)
        data += _pread_all(fd, start + len(data))
    return data


def compact(alerts_path: Path | str, archive_path: Path | str, lock_path: Path) -> CompactionReport:
    """Move every line of resolved alerts to the archive; rewrite alerts.jsonl atomically.

    Under wild's lock (one compactor at a time). Crash-safe: the archive is appended
    (fsynced) before alerts.jsonl is replaced, and lines already at the archive's end are
    not appended again, so re-running after a crash between the two steps neither loses nor
    duplicates. Appenders that take no lock: everything appended up to the rename is
    carried over (appends through `jsonl.append_bytes` are waited for by flock); a writer that
    does not flock (a shell `>>`) and writes to the old file after the post-rename drain is lost —
    the window is the few microseconds between its open() and write() straddling that drain.
    """
    alerts_path, archive_path = Path(alerts_path), Path(archive_path)
    with store.wild_lock(lock_path):
        try:
            fd = os.open(alerts_path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return CompactionReport(0, 0, 0, 0, 0)
        try:
            return _compact_open(fd, alerts_path, archive_path)
        finally:
            os.close(fd)  # also releases the exclusive flock


def _compact_open(fd: int, alerts_path: Path, archive_path: Path) -> CompactionReport:
    plan = _plan(_pread_all(fd, 0), alerts_path.name)
    if not plan.archive:
        return CompactionReport(0, 0, 0, len(plan.keep), 0)
    appended, skipped = _append_archive(archive_path, plan.archive)
    # From here on appenders that flock wait, and those that opened the old file before
    # the rename retry on the new one; then take whatever was appended since our read.
    fcntl.flock(fd, fcntl.LOCK_EX)
    tail = _read_settled(fd, plan.end)
    kept = b"".join(line + b"\n" for line in plan.keep)
    store.atomic_write(alerts_path, kept + tail)
    late = _read_settled(fd, plan.end + len(tail))
    if late:
        append_bytes(alerts_path, late)
    carried = tail.count(b"\n") + late.count(b"\n")
    return CompactionReport(plan.archived_ids, appended, skipped, len(plan.keep) + carried, carried)
