"""`.wild/alerts.summary.json` on disk: the open alerts, read in O(what was appended).

Read commands used to parse every line of alerts.jsonl (2 s and 300 MiB at 100,000 alerts)
to show the few still open. The summary (`wild.parsers.alerts_summary`) keeps the open
alerts, the problems found in the file's lines and a cursor (byte offset plus fingerprint:
`wild.store.alerts_log`). A reader checks the cursor against the log, parses only the bytes
after it, and saves the summary again when it read further.

The summary is a cache: it is derived from alerts.jsonl alone and never trusted over it. A
missing, corrupt or foreign-version summary, or a log that was truncated, replaced,
compacted or rewritten since, means a full read and a fresh summary. Writing it is an atomic
replace (a reader never sees half a summary) and takes no lock: two readers racing write
two valid summaries and the last one stays; one that fails to write (a read-only folder)
still answers from the log.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from wild.parsers.alerts import Alert
from wild.parsers.alerts_summary import (
    AlertSummary,
    advance,
    decode_summary,
    empty,
    encode_summary,
)
from wild.parsers.lines import Problem
from wild.store.alerts_log import read_new
from wild.store.files import atomic_write


def load_summary(path: Path) -> AlertSummary | None:
    """The stored summary, or None when there is none or it is unusable."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None
    return decode_summary(data)


def read_summary(log: Path, path: Path, *, file: str) -> tuple[AlertSummary, tuple[Problem, ...]]:
    """The summary brought up to date with the log, and the problems of the log as a whole
    (those of its complete lines plus a torn last line, each naming `file`)."""
    stored = load_summary(path)
    result = read_new(log, stored.cursor if stored is not None else None, file=file)
    if result.unreadable is not None:  # what was known stays known; nothing to save
        known = stored if stored is not None else empty(result.cursor)
        return known, (*known.problems_in(file), result.unreadable)
    base = stored if stored is not None and not result.reset else empty(result.cursor)
    lines_read = result.cursor.line_count
    complete = [p for p in result.problems if p.line <= lines_read]
    torn = tuple(p for p in result.problems if p.line > lines_read)
    summary = advance(base, result.entries, complete, result.cursor)
    exists = result.cursor.ino != 0  # no log, nothing worth remembering
    if exists and (stored is None or stored.cursor != summary.cursor):
        with contextlib.suppress(OSError):  # a cache: failing to save it loses nothing
            atomic_write(path, encode_summary(summary))
    return summary, (*summary.problems_in(file), *torn)


def read_open_alerts(
    log: Path, path: Path, *, file: str
) -> tuple[tuple[Alert, ...], tuple[Problem, ...]]:
    """The open alerts of the log, in the order they became open, and its problems."""
    summary, problems = read_summary(log, path, file=file)
    return summary.open, problems
