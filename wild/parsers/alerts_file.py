"""alerts.jsonl as a growing run of bytes: what appended bytes hold, where a reader got to,
and which lines compaction moves to the archive. Pure: `wild.store.alerts_log` and
`wild.store.alerts_compaction` do the reading and writing.
"""

from __future__ import annotations

from collections.abc import Iterator

from wild.parsers.alerts import FILE, INCOMPLETE, Alert, AlertStatus, parse_entry
from wild.parsers.jsonl import split_complete_lines
from wild.parsers.lines import Problem
from wild.record import record


@record
class AlertCursor:
    """How far alerts.jsonl was read, and which file that was (for `alertsFilePosition`)."""

    dev: int
    ino: int
    offset: int  # just past the last complete line consumed
    line_count: int  # complete lines consumed, so problems name the right line
    head: str  # hash of the first ≤64 bytes
    tail: str  # hash of the ≤64 bytes before `offset`

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


def _parse_lines(
    lines: list[bytes], first_line_no: int, file: str
) -> Iterator[tuple[int, Alert | None, tuple[Problem, ...]]]:
    for line_no, data in enumerate(lines, start=first_line_no):
        if not data or data.isspace():
            continue  # blank lines (e.g. from sealing a torn line) carry nothing
        alert, problems = parse_entry(data, line_no, file)
        yield line_no, alert, problems


@record
class Appended:
    """What a run of bytes appended to alerts.jsonl holds, up to its last complete line."""

    entries: tuple[Alert, ...]
    problems: tuple[Problem, ...]
    lines: int  # complete lines consumed (blank ones included, so line numbers stay right)
    consumed: int  # bytes those lines cover; a torn last line is left for the next read


def parse_appended(data: bytes, lines_before: int, file: str = FILE) -> Appended:
    """The alerts in `data`, read from just after line `lines_before` of the file.

    Only complete lines are consumed; a torn last line is reported as INCOMPLETE and is
    read again, finished, next time.
    """
    lines, consumed = split_complete_lines(data)
    entries: list[Alert] = []
    problems: list[Problem] = []
    for _, alert, found in _parse_lines(lines, lines_before + 1, file):
        if alert is not None:
            entries.append(alert)
        problems.extend(found)
    if consumed < len(data):
        problems.append(Problem(file, lines_before + len(lines) + 1, INCOMPLETE))
    return Appended(tuple(entries), tuple(problems), len(lines), consumed)


@record
class CompactionPlan:
    """Which complete lines compaction keeps in alerts.jsonl and which go to the archive."""

    keep: tuple[bytes, ...]
    archive: tuple[bytes, ...]
    archived_ids: int
    end: int  # bytes covered by the complete lines planned


def plan_compaction(data: bytes, file: str = FILE) -> CompactionPlan:
    """Split complete lines into those of resolved alerts and the rest (kept byte for byte)."""
    lines, end = split_complete_lines(data)
    owner: dict[int, str] = {}
    latest: dict[str, AlertStatus] = {}
    for index, alert, _ in _parse_lines(lines, 0, file):
        if alert is not None:
            owner[index] = alert.id
            latest[alert.id] = alert.status
    resolved = {alert_id for alert_id, status in latest.items() if status == "resolved"}
    moving = {i for i, alert_id in owner.items() if alert_id in resolved}
    return CompactionPlan(
        keep=tuple(line for i, line in enumerate(lines) if i not in moving),
        archive=tuple(line for i, line in enumerate(lines) if i in moving),
        archived_ids=len(resolved),
        end=end,
    )
