"""Compaction of runs.jsonl to the latest line per id (issue 23: `--runs` and `--status` at
10,000 runs cost little more than at 10).

A run's history is three or more lines (queued, running, ended, each rerun's), yet readers
need only its latest: once most of the file is superseded lines, the loop rewrites it with one
line per sweep and run. Which lines stay is `plan_compaction`, pure; `compact` does it
crash-safely while others append (the same protocol as `wild.store.alerts_compaction`).
"""

from __future__ import annotations

import os
from pathlib import Path

from wild.parsers.jsonl import complete_lines
from wild.parsers.runs import FILE, RunRecord
from wild.record import record
from wild.store import files
from wild.store.jsonl import replace_carrying_appends
from wild.store.runs_log import parse_line

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


def plan_compaction(data: bytes, file: str = FILE) -> CompactionPlan:
    """Each sweep's and run's latest line, at the place of its first line (so a listing in
    file order keeps its order); a line wild cannot read stays where it is, byte for byte
    (bad input is never lost: its problem is still reported, and a person can mend it)."""
    lines, end = complete_lines(data)
    slots: list[bytes] = []
    where: dict[tuple[bool, str], int] = {}
    read = 0
    # Line by line, not split at once: a split held a copy of the whole file (tens of MB
    # in a 10,000-run sweep) beside it; here only the lines kept are copies.
    for line in lines:
        if not line.strip():
            continue
        read += 1
        record, _problems = parse_line(line, 0, file)
        if record is None:
            slots.append(line)
            continue
        key = (isinstance(record, RunRecord), record.id)
        if key in where:
            slots[where[key]] = line  # the later line wins, as every reader takes it
        else:
            where[key] = len(slots)
            slots.append(line)
    return CompactionPlan(tuple(slots), end, read - len(slots))


@record
class CompactionReport:
    """What `compact` did: lines dropped, kept, and carried over from concurrent appends."""

    dropped: int
    kept_lines: int
    carried_lines: int


def compact(runs_path: Path, lock_path: Path) -> CompactionReport:
    """Rewrite runs.jsonl with its latest line per id, atomically, under wild's lock.

    Crash-safe: the new file is written and fsynced beside it, then renamed over it, so a
    kill at any instant leaves the old file or the new one, each holding every run's latest
    state. Appenders (the supervisor, `wild --rerun`, a sweep recorded from the CLI) take no
    lock of wild's: they flock the file itself, so taking its exclusive flock before the last
    read waits for appends under way, an append that opened the old file retries on the new
    one (`wild.store.jsonl.append_bytes`), and whatever was appended up to the rename is
    carried over; the drain after the rename takes any straggler.
    """
    with files.wild_lock(lock_path):
        try:
            fd = os.open(runs_path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return CompactionReport(0, 0, 0)
        try:
            plan = plan_compaction(files.pread_all(fd, 0), str(runs_path))
            if not plan.dropped:
                return CompactionReport(0, len(plan.keep), 0)
            carried = replace_carrying_appends(runs_path, fd, plan.end, plan.keep)
            return CompactionReport(plan.dropped, len(plan.keep) + carried, carried)
        finally:
            os.close(fd)  # also releases the exclusive flock
