"""Compaction of alerts.jsonl: lines of resolved alerts move to the archive (SPEC §1).

Which lines move is `wild.parsers.alerts.plan_compaction`; this module does it crash-safely
while jobs keep appending without wild's lock.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from wild.parsers.alerts_file import plan_compaction
from wild.parsers.jsonl import split_complete_lines
from wild.record import record
from wild.store import files
from wild.store.jsonl import append_bytes, replace_carrying_appends


@record
class CompactionReport:
    """What `compact` did; all zero when nothing was resolved."""

    archived_alerts: int  # ids whose lines left alerts.jsonl
    archived_lines: int  # lines appended to the archive now
    already_archived: int  # lines an interrupted earlier compaction had already archived
    kept_lines: int  # complete lines alerts.jsonl holds afterwards
    carried_lines: int  # lines others appended during the compaction, carried over


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
        data = files.pread_all(fd, start, total)
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
    with files.wild_lock(lock_path):
        try:
            fd = os.open(alerts_path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return CompactionReport(0, 0, 0, 0, 0)
        try:
            return _compact_open(fd, alerts_path, archive_path)
        finally:
            os.close(fd)  # also releases the exclusive flock


def _compact_open(fd: int, alerts_path: Path, archive_path: Path) -> CompactionReport:
    plan = plan_compaction(files.pread_all(fd, 0), alerts_path.name)
    if not plan.archive:
        return CompactionReport(0, 0, 0, len(plan.keep), 0)
    appended, skipped = _append_archive(archive_path, plan.archive)
    carried = replace_carrying_appends(alerts_path, fd, plan.end, plan.keep)
    return CompactionReport(plan.archived_ids, appended, skipped, len(plan.keep) + carried, carried)
