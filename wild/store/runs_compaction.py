"""Compaction of runs.jsonl to the latest line per id (issue 23: `--runs` and `--status` at
10,000 runs cost little more than at 10).

A run's history is three or more lines (queued, running, ended, each rerun's), yet readers
need only its latest: once most of the file is superseded lines, the loop rewrites it with one
line per sweep and run. Which lines stay is `plan_compaction`, pure; `compact` does it
crash-safely while others append (the same protocol as `wild.store.alerts_compaction`).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from pathlib import Path

from wild.parsers.alerts_file import AlertCursor
from wild.parsers.jsonl import complete_lines
from wild.parsers.runs import FILE, RunRecord
from wild.record import record
from wild.store import files
from wild.store.jsonl import replace_carrying_appends
from wild.store.offset_read import continues, cursor_at, file_chunks
from wild.store.runs_log import LENGTH, KnownLines, Moved, parse_line

# Below this size a rewrite saves too little to be worth a write, a fsync and a rename.
MIN_BYTES = 1 << 20


def due(size: int, lines: int, records: int) -> bool:
    """Whether runs.jsonl is worth compacting: big enough, and at least half of its lines
    superseded. The file then stays within twice its compacted size, and each line is
    rewritten O(1) times on average."""
    return size >= MIN_BYTES and lines >= 2 * max(records, 1)


@record
class CompactionPlan:
    """The complete lines runs.jsonl keeps, and where the lines read end."""

    keep: tuple[bytes, ...]
    end: int  # just past the last complete line read
    dropped: int  # lines superseded by a later line of the same sweep or run


@record
class Places:
    """Where the lines runs.jsonl keeps are: each as (byte offset << 32) | length, in the
    order they are written; and how many lines were read."""

    kept: array[int]
    read: int
    # Each sweep's kept line, by the sweep's id: its place in `kept` (a few per file).
    sweeps: dict[str, int] = field(default_factory=dict)
    lines: int = 0  # every complete line read, blank ones too (a reader's line count)

    @property
    def dropped(self) -> int:
        return self.read - len(self.kept)


def plan_places(
    lines: Iterable[tuple[int, bytes]], file: str = FILE, sweeps: Mapping[int, str] | None = None
) -> Places:
    """Each sweep's and run's latest line, at the place of its first line (so a listing in
    file order keeps its order); a line wild cannot read stays where it is, byte for byte
    (bad input is never lost: its problem is still reported, and a person can mend it).

    `lines` are the file's complete lines with their byte offsets; only their places are
    kept (one int each), not copies of them: a 10,000-run sweep's file is tens of MB.
    `sweeps` names lines already known to be sweeps' (by byte offset): they are not parsed
    again (`KnownLines`)."""
    known = sweeps or {}
    # Packed in an array, 8 bytes each (a list held an int object and a pointer, 40).
    slots = array("Q")
    # By kind, each keyed by the record's own id (the reader interns a run's: one string
    # per run, not a new "r:<id>" key per run, ~70 bytes each at 10,000 runs).
    runs: dict[str, int] = {}
    by_sweep: dict[str, int] = {}
    read = total = 0
    for offset, line in lines:
        total += 1
        if not line.strip():
            continue
        read += 1
        place = (offset << 32) | len(line)
        sweep_id = known.get(offset)
        if sweep_id is not None:
            where, key = by_sweep, sweep_id
        else:
            record, _problems = parse_line(line, 0, file)
            if record is None:
                slots.append(place)
                continue
            where, key = (runs if isinstance(record, RunRecord) else by_sweep), record.id
        if key in where:
            slots[where[key]] = place  # the later line wins, as every reader takes it
        else:
            where[key] = len(slots)
            slots.append(place)
    return Places(slots, read, by_sweep, total)


def plan_compaction(data: bytes, file: str = FILE) -> CompactionPlan:
    """`plan_places` of bytes in hand: the lines kept, copied out of `data`."""
    lines, end = complete_lines(data)
    places = plan_places(_with_offsets(lines), file)
    keep = tuple(data[p >> 32 : (p >> 32) + (p & LENGTH)] for p in places.kept)
    return CompactionPlan(keep, end, places.dropped)


def _with_offsets(lines: Iterable[bytes], start: int = 0) -> Iterator[tuple[int, bytes]]:
    at = start
    for line in lines:
        yield at, line
        at += len(line) + 1


def _file_lines(fd: int, ends: list[int]) -> Iterator[tuple[int, bytes]]:
    """The open file's complete lines with their offsets, read a chunk at a time (the whole
    file is never held: `file_chunks`); `ends` gets where the last complete line ends."""
    at, rest = 0, b""
    for chunk in file_chunks(fd):
        data = rest + chunk
        lines, consumed = complete_lines(data)
        yield from _with_offsets(lines, at)
        at, rest = at + consumed, data[consumed:]
    ends.append(at)


def _kept_lines(fd: int, places: Sequence[int]) -> Iterator[bytes]:
    """The kept lines, each read from the file when the writer asks for it."""
    for place in places:
        offset, length = place >> 32, place & LENGTH
        yield os.pread(fd, length, offset)


@record
class CompactionReport:
    """What `compact` did: lines dropped, kept, and carried over from concurrent appends;
    and, when it rewrote the file, where each kept line went."""

    dropped: int
    kept_lines: int
    carried_lines: int
    moved: Moved | None = field(default=None, compare=False, repr=False)


def compact(runs_path: Path, lock_path: Path, known: KnownLines | None = None) -> CompactionReport:
    """Rewrite runs.jsonl with its latest line per id, atomically, under wild's lock.

    Crash-safe: the new file is written and fsynced beside it, then renamed over it, so a
    kill at any instant leaves the old file or the new one, each holding every run's latest
    state. Appenders (the supervisor, `wild --rerun`, a sweep recorded from the CLI) take no
    lock of wild's: they flock the file itself, so taking its exclusive flock before the last
    read waits for appends under way, an append that opened the old file retries on the new
    one (`wild.store.jsonl.append_bytes`), and whatever was appended up to the rename is
    carried over; the drain after the rename takes any straggler.

    `known`: what a reader read of the file (the loop's), taken as read when the file is
    the one its cursor read, grown only by appends (as the reader itself reads on).
    """
    with files.wild_lock(lock_path):
        try:
            fd = os.open(runs_path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return CompactionReport(0, 0, 0)
        try:
            ends: list[int] = []
            sweeps = _known_sweeps(fd, known)
            places = plan_places(_file_lines(fd, ends), str(runs_path), sweeps)
            if not places.dropped:
                return CompactionReport(0, len(places.kept), 0)
            read = cursor_at(fd, os.fstat(fd), ends[0], places.lines)
            kept = _kept_lines(fd, places.kept)
            carried = replace_carrying_appends(runs_path, fd, ends[0], kept)
            moved = _moved(runs_path, read, places)
            return CompactionReport(places.dropped, len(places.kept) + carried, carried, moved)
        finally:
            os.close(fd)  # also releases the exclusive flock


def _known_sweeps(fd: int, known: KnownLines | None) -> Mapping[int, str]:
    """The sweeps' lines `known` names, when the open file is the one it read."""
    if known is None or not continues(known.cursor, fd, os.fstat(fd)):
        return {}
    end = known.cursor.offset
    return {offset: sweep for offset, sweep in known.sweeps.items() if offset < end}


def _moved(runs_path: Path, read: AlertCursor, places: Places) -> Moved | None:
    """Where the kept lines went, with the new file's cursor past them (read under wild's
    lock, which every compaction holds: the file at the name is the one just written, grown
    only by appends); None when it cannot be read (a reader then reads it from its start)."""
    size = sum((place & LENGTH) + 1 for place in places.kept)
    try:
        fd = os.open(runs_path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_size < size:
            return None
        written = cursor_at(fd, st, size, len(places.kept))
    except OSError:
        return None
    finally:
        os.close(fd)
    return Moved(read, written, places.kept, places.sweeps)
