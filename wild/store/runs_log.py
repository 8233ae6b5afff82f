"""runs.jsonl on disk: append records with the one appender, read them into a `RunIndex`
(whole, or incrementally by byte offset like alerts.jsonl). Torn lines are skipped and
reported with the file and line; a bad line never stops the read."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Protocol, Self

from wild.parsers.alerts import INCOMPLETE, MAX_LINE_BYTES
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.jsonl import complete_lines, trailing_object_start
from wild.parsers.lines import Problem
from wild.parsers.run_table import RunTable
from wild.parsers.runs import (
    FILE,
    Record,
    RunIndex,
    RunRecord,
    SweepRecord,
    encode_record,
    parse_record,
)
from wild.record import record as frozen_record
from wild.record import replace
from wild.store.jsonl import append_parts
from wild.store.offset_read import read_on

# The size of each buffer one append of many records is built in (`append_records`).
APPEND_PART = 1 << 20

# The byte-offset cursor of alerts.jsonl serves any append-only JSON-lines file.
Cursor = AlertCursor

# A line's place, as a compaction keeps it: (byte offset << 32) | length.
LENGTH = (1 << 32) - 1


def append_records(path: Path, records: Iterable[Record]) -> None:
    """Append the records' lines with ONE write, so a sweep and its runs land together or
    not at all (a crash cannot leave half a sweep).

    The lines are added to buffers of about APPEND_PART bytes as they are encoded, not kept
    one by one in a list (each encoded line holds about 4 KiB until it is freed: orjson's
    buffer is not shrunk to the line, so a list of a 10,000-run sweep's lines held ~60 MB
    for ~6 MB of text), nor in one buffer grown to the whole (each growth may copy it: ~2x
    its size at the top), and the buffers are written together (`os.writev`), not joined."""
    parts: list[bytearray] = []
    part = bytearray()
    for record in records:
        if len(part) >= APPEND_PART:
            parts.append(part)
            part = bytearray()
        part += encode_record(record)
    if part:
        parts.append(part)
    if parts:
        append_parts(path, parts)


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


def parse_appended(
    data: bytes,
    lines_before: int,
    file: str = FILE,
    sink: Callable[[Record, int], None] | None = None,
    offset: int = 0,
) -> Parsed:
    """The records in `data`, read from just after line `lines_before` of the file.

    With `sink`, each record is given to it with its line's byte offset in the file (`data`
    starts at `offset`) as it is parsed, not collected: the lean reader keeps no more than
    one record at a time of a 10,000-run file read whole."""
    lines, consumed = complete_lines(data)
    records: list[Record] = []
    problems: list[Problem] = []
    line_no = lines_before
    at = offset
    for line_no, line in enumerate(lines, start=lines_before + 1):
        start, at = at, at + len(line) + 1
        if not line.strip():
            continue
        record, found = parse_line(line, line_no, file)
        if record is not None and sink is not None:
            sink(record, start)
        elif record is not None:
            records.append(record)
        problems.extend(found)
    if consumed < len(data):
        problems.append(Problem(file, line_no + 1, INCOMPLETE))
    return Parsed(tuple(records), tuple(problems), line_no - lines_before, consumed)


@frozen_record
class Moved:
    """Where a compaction of runs.jsonl put each line it kept (`wild.store.runs_compaction`),
    for a reader that had read exactly the file it compacted: `read` is that file's cursor at
    the compaction's end of read; `kept` the kept lines' places in it, in the new file's
    order (one line each from its start, `LENGTH`), `sweeps` each sweep's index in `kept`;
    `written` the new file's cursor just past them (lines appended meanwhile were carried
    after it, still to be read). The reader moves what it holds to the new lines instead of
    reading the new file again from its start (`RunLog.follow`)."""

    read: AlertCursor
    written: AlertCursor
    kept: Sequence[int]
    sweeps: dict[str, int]

    def sweep_lines(self) -> dict[int, str]:
        """Each sweep's line in the new file: its byte offset → the sweep's id."""
        slots = {slot: sweep_id for sweep_id, slot in self.sweeps.items()}
        found, at = {}, 0
        for number, place in enumerate(self.kept):
            if number in slots:
                found[at] = slots[number]
            at += (place & LENGTH) + 1
        return found

    def run_lines(self) -> Iterator[tuple[int, int, int]]:
        """(offset in the old file, offset in the new, line number in the new) of each kept
        line that is not a sweep's, in order."""
        sweeps = set(self.sweeps.values())
        at = 0
        for number, place in enumerate(self.kept):
            if number not in sweeps:
                yield place >> 32, at, number + 1
            at += (place & LENGTH) + 1


@frozen_record
class KnownLines:
    """What a reader read of runs.jsonl, for a compaction of the same file (`cursor`): the
    byte offsets of the sweeps' lines, with their ids. A compaction that finds the file the
    one the cursor read takes them as they were read instead of parsing them again."""

    cursor: AlertCursor
    sweeps: Mapping[int, str]


class RunListener(Protocol):
    """What follows a lean log's records as they are read (the supervisor's open runs)."""

    def fresh(self) -> Self:
        """An empty one of its kind, fed a read from the start apart from this one."""

    def adopt(self, fed: Self) -> None:
        """Become `fed` (a read from the start that succeeded): forget what came before."""

    def record(self, run: RunRecord) -> None:
        """`run` is its id's latest line."""


@frozen_record(frozen=False)
class RunLog:
    """runs.jsonl as a reader keeps it: the index, kept current by reading only new bytes.

    A truncated or replaced file is read again from the start (the index is rebuilt); one
    that cannot be read keeps the index (`wild.store.offset_read`).

    A `lean` log (the loop's supervisor's) keeps its runs in a `RunTable`: only the running
    runs' records, and for the others where their line is, read again when asked for. It
    gives each run record read to `listener` as it is read, and `refresh` returns no records
    (a 10,000-run sweep's lines, read at once, would all be held).
    """

    path: Path
    index: RunIndex = field(default_factory=RunIndex)
    problems: list[Problem] = field(default_factory=list)
    cursor: Cursor | None = None
    unreadable: Problem | None = None  # why the last refresh could not read the file
    lean: bool = False
    listener: RunListener | None = None
    # What `_start_over` read, until `refresh` puts it in place.
    _started_over: tuple[RunIndex, RunListener | None] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.lean:
            self.index = self._lean_index()

    def _lean_index(self) -> RunIndex:
        return RunIndex(runs=RunTable(self._load))

    def _take(self, record: Record, offset: int) -> None:
        """A lean read's record: into the table at its place, and to the listener."""
        _put(self.index, self.listener, record, offset)

    def _start_over(self, chunks: Iterator[bytes]) -> Parsed:
        """A lean read from the start: a new table and listener filled from the file's
        chunks, a line at a time, beside the ones held (an int per run and the open runs'
        ids, small), which they replace once the read is done (`refresh`): a read that fails
        mid-way leaves them as they were."""
        index = self._lean_index()
        listener = self.listener.fresh() if self.listener is not None else None
        held = self.index.sweeps
        problems: list[Problem] = []
        lines = consumed = 0
        rest = b""
        for chunk in chunks:
            data = rest + chunk if rest else chunk
            end = data.rfind(b"\n") + 1
            found = parse_appended(
                data[:end], lines, str(self.path),
                lambda record, at: _put(index, listener, _as_held(record, held), at), consumed,
            )  # fmt: skip
            problems += found.problems
            lines, consumed, rest = lines + found.lines, consumed + end, data[end:]
        if rest:
            problems.append(Problem(str(self.path), lines + 1, INCOMPLETE))
        self._started_over = (index, listener)
        return Parsed((), tuple(problems), lines, consumed)

    def _load(self, run_id: str, offset: int, line: int) -> RunRecord | None:
        """A run's record read again from its line at `offset` of the file the index was
        read from; when that file was replaced since (compacted, rewritten), from the file as
        it is now, read whole (rare: the supervisor reads on before each use)."""
        cursor = self.cursor
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if cursor is not None and (st.st_dev, st.st_ino) == (cursor.dev, cursor.ino):
                data = _line_at(fd, offset, cursor.offset)
                record, _ = parse_line(data, line, str(self.path)) if data else (None, [])
                if isinstance(record, RunRecord) and record.id == run_id:
                    return record
        except OSError:
            return None
        finally:
            os.close(fd)
        return read_runs(self.path).index.runs.get(run_id)

    def known_lines(self) -> KnownLines | None:
        """What a lean log knows of the file it read without parsing it again, for this
        process's compaction of it (None: nothing)."""
        runs = self.index.runs
        if not isinstance(runs, RunTable) or self.cursor is None or self.unreadable:
            return None
        return KnownLines(self.cursor, runs.sweep_lines)

    def follow(self, moved: Moved) -> bool:
        """Take this process's own compaction of the file: a lean log that had read exactly
        the file compacted (`moved.read`), with no line it could not read before its end,
        moves each run's and sweep's place to its new line and reads on from `moved.written`
        (what was appended meanwhile comes next), as a read of the new file from its start
        would have left it, without that read (a second table and open runs beside the held
        ones, every line parsed again: the peak of a 10,000-run sweep's loop). False when it
        cannot (another file, a line it skipped, a run it does not know where): it changes
        nothing then, and its next refresh reads the new file from the start, as before."""
        runs, sweeps = self.index.runs, self.index.sweeps
        if (
            not self.lean
            or not isinstance(runs, RunTable)
            or self.cursor != moved.read
            or self.unreadable is not None
            or any(p.line <= moved.read.line_count for p in self.problems)
            or sweeps.keys() != moved.sweeps.keys()
            or not runs.move(moved.run_lines)
        ):
            return False
        self.index.sweeps = {
            sweep_id: replace(sweep, line=moved.sweeps[sweep_id] + 1)
            for sweep_id, sweep in sweeps.items()
        }
        runs.sweep_lines = moved.sweep_lines()
        self.problems = []  # a torn last line was carried: the next refresh finds it again
        self.cursor = moved.written
        return True

    def refresh(self) -> tuple[Record, ...]:
        """Read what was appended since the last refresh; returns the new records (none
        from a lean log: its listener was given them)."""

        def parse(data: bytes, base: int) -> Parsed:
            if self.lean and base == 0:  # no file (any other is read by `_start_over`)
                self.index = self._lean_index()
                if self.listener is not None:
                    self.listener.adopt(self.listener.fresh())
            elif base == 0 and self.cursor is not None and self.cursor.line_count:
                # Read again from the start (compacted, replaced): the old index is let go
                # before the new one is built, not held beside it (a 10,000-run sweep's
                # index is tens of MB). From here on the read cannot fail (`read_on`).
                self.index = RunIndex()
            if self.lean:
                at = self.cursor.offset if base and self.cursor is not None else 0
                return parse_appended(data, base, str(self.path), self._take, at)
            return parse_appended(data, base, str(self.path))

        self._started_over = None
        start_over = self._start_over if self.lean else None
        read = read_on(self.path, self.cursor, parse, str(self.path), start_over)
        started_over, self._started_over = self._started_over, None
        self.problems = [p for p in self.problems if p != self.unreadable]
        self.unreadable = read.unreadable
        if read.unreadable is not None:  # the index stays as it was; the next refresh retries
            self.problems.append(read.unreadable)
            return ()
        if started_over is not None:
            self.index, listener = started_over
            if self.listener is not None and listener is not None:
                self.listener.adopt(listener)
        base = 0 if read.fresh or self.cursor is None else self.cursor.line_count
        self.cursor, found = read.cursor, read.parsed
        if read.fresh:
            self.problems = []
            if not self.lean:
                self.index = RunIndex()
        # A torn tail (past `base`) is reported until its writer finishes it, then read.
        self.problems = [p for p in self.problems if p.line <= base] + list(found.problems)
        self.index.apply(found.records)
        return found.records


def _as_held(record: Record, held: Mapping[str, SweepRecord]) -> Record:
    """A sweep line read again as it was (a read from the start after a compaction) is the
    record held, at its new line: its spec, line object and run ids are not made twice (a
    10,000-point grid's are ~0.5 MB, held beside the old ones while the file is read)."""
    if isinstance(record, SweepRecord):
        old = held.get(record.id)
        if old is not None and old.raw == record.raw:
            return replace(old, line=record.line)
    return record


def _put(index: RunIndex, listener: RunListener | None, record: Record, offset: int) -> None:
    """A lean read's record into `index` (a run's at its line's `offset`) and to `listener`."""
    if isinstance(record, RunRecord):
        runs = index.runs
        if isinstance(runs, RunTable):
            runs.put(record, offset)
        else:
            runs[record.id] = record
        if listener is not None:
            listener.record(record)
    else:
        index.sweeps[record.id] = record
        if isinstance(index.runs, RunTable):
            index.runs.sweep_lines[offset] = record.id


def _line_at(fd: int, offset: int, end: int) -> bytes:
    """The complete line that starts at byte `offset` (b"" past `end`, the bytes read)."""
    if offset >= end:
        return b""
    size = 4096
    while True:
        data = os.pread(fd, min(size, end - offset), offset)
        stop = data.find(b"\n")
        if stop >= 0:
            return data[:stop]
        if offset + len(data) >= end or size > MAX_LINE_BYTES:
            return b""
        size *= 4


def read_runs(path: Path) -> RunLog:
    """The whole file read once: `.index` and `.problems`."""
    log = RunLog(path)
    log.refresh()
    return log
