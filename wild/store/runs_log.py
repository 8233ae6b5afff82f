"""runs.jsonl on disk: append records with the one appender, read them into a `RunIndex`
(whole, or incrementally by byte offset like alerts.jsonl). Torn lines are skipped and
reported with the file and line; a bad line never stops the read."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from wild.errors import describe_os_error
from wild.parsers.alerts import INCOMPLETE, MAX_LINE_BYTES
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.jsonl import split_complete_lines, trailing_object_start
from wild.parsers.lines import Problem
from wild.parsers.runs import FILE, Record, RunIndex, encode_record, parse_record
from wild.store.alerts_log import continues, cursor_at
from wild.store.files import pread_all
from wild.store.jsonl import append_bytes

# The byte-offset cursor of alerts.jsonl serves any append-only JSON-lines file.
Cursor = AlertCursor


def append_records(path: Path, records: Iterable[Record]) -> None:
    """Append the records' lines with ONE write, so a sweep and its runs land together or
    not at all (a crash cannot leave half a sweep)."""
    data = b"".join(encode_record(record) for record in records)
    if data:
        append_bytes(path, data)


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


@dataclass(frozen=True)
class Parsed:
    """The records in appended bytes, up to their last complete line."""

    records: tuple[Record, ...]
    problems: tuple[Problem, ...]
    lines: int
    consumed: int


def parse_appended(data: bytes, lines_before: int, file: str = FILE) -> Parsed:
    """The records in `data`, read from just after line `lines_before` of the file."""
    lines, consumed = split_complete_lines(data)
    records: list[Record] = []
    problems: list[Problem] = []
    for line_no, line in enumerate(lines, start=lines_before + 1):
        if not line.strip():
            continue
        record, found = parse_line(line, line_no, file)
        records.extend([record] if record is not None else [])
        problems.extend(found)
    if consumed < len(data):
        problems.append(Problem(file, lines_before + len(lines) + 1, INCOMPLETE))
    return Parsed(tuple(records), tuple(problems), len(lines), consumed)


@dataclass(frozen=True)
class ReadNew:
    """What `read_new` found: the records and problems after `cursor`, the cursor now, and
    whether the file is another than the one the old cursor read (then it was read whole)."""

    records: tuple[Record, ...]
    problems: tuple[Problem, ...]
    cursor: Cursor | None
    reset: bool


def read_new(path: Path, cursor: Cursor | None) -> ReadNew:
    """The records appended since `cursor` (all of them when None, or when the file was
    truncated, replaced or compacted since), in O(new bytes); raises OSError but for a
    missing file (then there is nothing, and no cursor)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return ReadNew((), (), None, reset=True)
    try:
        st = os.fstat(fd)
        keep = cursor is not None and continues(cursor, fd, st)
        start, base = (cursor.offset, cursor.line_count) if keep and cursor else (0, 0)
        found = parse_appended(pread_all(fd, start, st.st_size), base, str(path))
        now = cursor_at(fd, st, start + found.consumed, base + found.lines)
    finally:
        os.close(fd)
    return ReadNew(found.records, found.problems, now, reset=not keep)


@dataclass
class RunLog:
    """runs.jsonl as a reader keeps it: the index, kept current by reading only new bytes.

    A truncated or replaced file is read again from the start (the index is rebuilt).
    """

    path: Path
    index: RunIndex = field(default_factory=RunIndex)
    problems: list[Problem] = field(default_factory=list)
    cursor: Cursor | None = None

    def refresh(self) -> tuple[Record, ...]:
        """Read what was appended since the last refresh; returns the new records."""
        try:
            found = read_new(self.path, self.cursor)
        except OSError as error:  # a folder where the file belongs, an I/O error: said, not fatal
            self.index, self.cursor = RunIndex(), None
            self.problems = [Problem(str(self.path), 1, describe_os_error(error))]
            return ()
        base = 0 if found.reset or self.cursor is None else self.cursor.line_count
        self.cursor = found.cursor
        if found.reset:
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
