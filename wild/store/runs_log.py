"""runs.jsonl on disk: append records with the one appender, read them into a `RunIndex`
(whole, or incrementally by byte offset like alerts.jsonl). Torn lines are skipped and
reported with the file and line; a bad line never stops the read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from wild.parsers.alerts import INCOMPLETE, MAX_LINE_BYTES
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.jsonl import complete_lines, trailing_object_start
from wild.parsers.lines import Problem
from wild.parsers.runs import FILE, Record, RunIndex, encode_record, parse_record
from wild.record import record as frozen_record
from wild.store.jsonl import append_bytes
from wild.store.offset_read import read_on

# The byte-offset cursor of alerts.jsonl serves any append-only JSON-lines file.
Cursor = AlertCursor


def append_records(path: Path, records: Iterable[Record]) -> None:
    """Append the records' lines with ONE write, so a sweep and its runs land together or
    not at all (a crash cannot leave half a sweep).

    The lines are added to one buffer as they are encoded, not joined from a list: each
    encoded line holds about 4 KiB until it is freed (orjson's buffer is not shrunk to the
    line), so a list of a 10,000-run sweep's lines held ~60 MB for ~6 MB of text."""
    data = bytearray()
    for record in records:
        data += encode_record(record)
    if data:
        append_bytes(path, bytes(data))


def parse_line(data: bytes, line_no: int, file: str) -> tuple[Record | None, list[Problem]]:
    """One complete line's record, as every reader takes it (a torn line glued onto a whole
    one yields the whole one), and its problems."""
    record, problem = parse_record(data, line_no, file)
    if record is not None or problem is None:
        return record, []
    # A writer that died mid-line leaves a fragment the next whole line is glued onto.
    start = trailing_object_start(data, MAX_LINE_BYTES)
    if start:
        glued, _ = parse_record(data[start:], line_no, file)
        if glued is not None:
            return glued, [Problem(file, line_no, "a writer's unfinished line, skipped")]
    return None, [problem]


@frozen_record
class Parsed:
    """The records in appended bytes, up to their last complete line."""

    records: tuple[Record, ...]
    problems: tuple[Problem, ...]
    lines: int
    consumed: int


def parse_appended(data: bytes, lines_before: int, file: str = FILE) -> Parsed:
    """The records in `data`, read from just after line `lines_before` of the file."""
    lines, consumed = complete_lines(data)
    records: list[Record] = []
    problems: list[Problem] = []
    line_no = lines_before
    for line_no, line in enumerate(lines, start=lines_before + 1):
        if not line.strip():
            continue
        record, found = parse_line(line, line_no, file)
        records.extend([record] if record is not None else [])
        problems.extend(found)
    if consumed < len(data):
        problems.append(Problem(file, line_no + 1, INCOMPLETE))
    return Parsed(tuple(records), tuple(problems), line_no - lines_before, consumed)


@dataclass
class RunLog:
    """runs.jsonl as a reader keeps it: the index, kept current by reading only new bytes.

    A truncated or replaced file is read again from the start (the index is rebuilt); one
    that cannot be read keeps the index (`wild.store.offset_read`).
    """

    path: Path
    index: RunIndex = field(default_factory=RunIndex)
    problems: list[Problem] = field(default_factory=list)
    cursor: Cursor | None = None
    unreadable: Problem | None = None  # why the last refresh could not read the file

    def refresh(self) -> tuple[Record, ...]:
        """Read what was appended since the last refresh; returns the new records."""

        def parse(data: bytes, base: int) -> Parsed:
            if base == 0 and self.cursor is not None and self.cursor.line_count:
                # Read again from the start (compacted, replaced): the old index is let go
                # before the new one is built, not held beside it (a 10,000-run sweep's
                # index is tens of MB). From here on the read cannot fail (`read_on`).
                self.index = RunIndex()
            return parse_appended(data, base, str(self.path))

        read = read_on(self.path, self.cursor, parse, str(self.path))
        self.problems = [p for p in self.problems if p != self.unreadable]
        self.unreadable = read.unreadable
        if read.unreadable is not None:  # the index stays as it was; the next refresh retries
            self.problems.append(read.unreadable)
            return ()
        base = 0 if read.fresh or self.cursor is None else self.cursor.line_count
        self.cursor, found = read.cursor, read.parsed
        if read.fresh:
            self.index, self.problems = RunIndex(), []
        # A torn tail (past `base`) is reported until its writer finishes it, then read.
        self.problems = [p for p in self.problems if p.line <= base] + list(found.problems)
        self.index.apply(found.records)
        return found.records


def read_runs(path: Path) -> RunLog:
    """The whole file read once: `.index` and `.problems`."""
    log = RunLog(path)
    log.refresh()
    return log
