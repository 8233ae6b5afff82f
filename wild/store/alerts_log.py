"""alerts.jsonl on disk: append one alert safely, read new lines by byte offset, keep an index.

The file is append-only and jobs, webhooks and agents append to it without wild's lock, so a
reader remembers how far it read (an `AlertCursor`, saved in state.json) and which file that
was: a truncated, replaced, compacted or rewritten file is read again from the start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wild.clock import FileStamp, file_stamp, settled
from wild.parsers.alerts import Alert, AlertIndex, changed_for_the_loop, encode_alert
from wild.parsers.alerts_file import AlertCursor, parse_appended
from wild.parsers.lines import Problem
from wild.record import record
from wild.store.jsonl import append_bytes
from wild.store.offset_read import continues, read_on


def append_alert(path: Path | str, record: Mapping[str, Any]) -> None:
    """Append one alert line; safe against concurrent appenders and a running compaction."""
    # An OSError goes up as it is: the loop waits out a full disk, the CLI names the file.
    append_bytes(Path(path), encode_alert(record))


# --------------------------------------------------------------------------------- reading


@record
class ReadResult:
    """What `read_new` found; `reset` means the file is not the one the cursor read;
    `unreadable`, that it could not be read (then the cursor did not move)."""

    entries: tuple[Alert, ...]
    problems: tuple[Problem, ...]
    cursor: AlertCursor
    reset: bool
    unreadable: Problem | None = None


def read_new(
    path: Path | str, cursor: AlertCursor | None, *, file: str | None = None
) -> ReadResult:
    """Alerts appended since `cursor` (all of them when None), in O(new bytes).

    Problems name `file` (default: the file's bare name), as the other parsers' do.

    Only complete lines are consumed; a torn last line is reported and read again next
    time. A truncated, replaced, compacted or rewritten file gives reset=True and is read
    from the start; a missing one is empty. One that cannot be read: `wild.store.offset_read`.
    """
    path = Path(path)
    had_data = cursor is not None and cursor.offset > 0
    shown = file if file is not None else path.name
    read = read_on(path, cursor, lambda data, base: parse_appended(data, base, shown), shown)
    found = read.parsed
    reset = had_data and read.fresh
    return ReadResult(found.entries, found.problems, read.cursor, reset, read.unreadable)


def appended_since(path: Path | str, cursor: AlertCursor | None, alert_id: str) -> list[Alert]:
    """The lines for `alert_id` appended after `cursor` (what a reader has not seen yet), in
    O(new bytes); the reader's own cursor is left alone. In a file that no longer continues
    the cursor (compacted, replaced) every line is new: the caller tells its own from others'."""
    return [a for a in read_new(path, cursor).entries if a.id == alert_id]


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
        self._unreadable: Problem | None = None
        # The file's stamp taken before the last read, when it had settled by then (changed
        # over RACY_NS before): the same stamp now means nothing was written since.
        self._settled: FileStamp | None = None

    @property
    def cursor(self) -> AlertCursor | None:
        """What to save as `alertsFilePosition` once the changed alerts were handled."""
        return self._cursor

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Every unusable or odd line in the file as last read, plus a torn last line, or
        why the file could not be read."""
        unreadable = (self._unreadable,) if self._unreadable is not None else ()
        return (*self._line_problems, *self._tail_problems, *unreadable)

    def refresh(self) -> tuple[Alert, ...]:
        """Read what was appended; returns the alerts whose state changed. A file whose
        stamp is the one it had, settled, before the last read is not read again (most
        refreshes: the loop refreshes after every agent run, ~0.1 ms; issue 22 item 8)."""
        stamp = _stamp(self.path)
        if stamp is not None and stamp == self._settled:
            return ()
        first = self._cursor is None
        result = read_new(self.path, self._cursor)
        self._unreadable = result.unreadable
        if result.unreadable is not None:  # the index stays as it was; the next read retries
            self._settled = None
            return ()
        self._settled = stamp if stamp is not None and settled(stamp) else None
        self._cursor = result.cursor
        lines_read = result.cursor.line_count
        self._tail_problems = tuple(p for p in result.problems if p.line > lines_read)
        complete = [p for p in result.problems if p.line <= lines_read]
        if result.reset:
            old, self.index = self.index, AlertIndex(result.entries)
            self._line_problems = complete
            return tuple(a for a in self.index.all() if changed_for_the_loop(old.get(a.id), a))
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
            return since.offset <= now.offset and continues(since, fd, os.fstat(fd))
        finally:
            os.close(fd)


def _stamp(path: Path) -> FileStamp | None:
    """The file's stamp now, None where it cannot be stat'ed."""
    try:
        return file_stamp(os.stat(path))
    except OSError:
        return None
