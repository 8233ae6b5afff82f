"""`.wild/runs.summary.json` on disk: what `wild --status` needs of runs.jsonl, read in
O(what was appended) (`wild.parsers.runs_summary` says what it holds).

A reader checks the summary's cursor (byte offset plus fingerprint, as alerts.summary.json's)
against runs.jsonl, parses only the bytes after it, and saves the summary again when it read
further. The summary is a cache derived from runs.jsonl alone and never trusted over it: a
missing, corrupt or foreign-version summary, or a log truncated, replaced or compacted since,
means a full read and a fresh summary. Writing it is an atomic replace that takes no lock;
failing to write it (a read-only folder) still answers from the log.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from wild.parsers.alerts_file import AlertCursor
from wild.parsers.lines import Problem
from wild.parsers.runs_summary import RunsSummary, advance, decode_summary, empty, encode_summary
from wild.store.files import atomic_write
from wild.store.offset_read import read_on
from wild.store.runs_log import parse_appended

NO_FILE = AlertCursor(0, 0, 0, 0, "", "")  # an empty summary's: never saved


def load_summary(path: Path) -> RunsSummary | None:
    """The stored summary, or None when there is none or it is unusable."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return decode_summary(data)


def read_summary(log: Path, path: Path) -> tuple[RunsSummary, tuple[Problem, ...]]:
    """The summary brought up to date with runs.jsonl, and the file's problems (those of its
    complete lines plus a torn last line's)."""
    stored = load_summary(path)
    since = stored.cursor if stored is not None else None
    found = read_on(log, since, lambda data, base: parse_appended(data, base, str(log)), str(log))
    if found.unreadable is not None:  # a folder where the file belongs: said, not fatal
        return empty(NO_FILE), (found.unreadable,)
    if found.cursor.ino == 0:  # no runs.jsonl: no runs, nothing worth remembering
        return empty(NO_FILE), ()
    base = stored if stored is not None and not found.fresh else empty(found.cursor)
    lines_read = found.cursor.line_count
    complete = [p for p in found.parsed.problems if p.line <= lines_read]
    torn = tuple(p for p in found.parsed.problems if p.line > lines_read)
    summary = advance(base, found.parsed.records, complete, found.cursor)
    if stored is None or stored.cursor != summary.cursor:
        with contextlib.suppress(OSError):  # a cache: failing to save it loses nothing
            atomic_write(path, encode_summary(summary))
    return summary, (*summary.problems_in(str(log)), *torn)
