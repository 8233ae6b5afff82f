"""Injectable time, so the loop, policy expiry and barrier intervals test deterministically."""

from __future__ import annotations

import functools
import re
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import os  # a stat result's type: the clock reads no file


@functools.cache
def _year() -> re.Pattern[str]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile(r"(?<!\d)\d{4}(?!\d)")


# The longest span wild accepts, from a file or a flag: a hundred years is forever for a loop,
# and anything longer only overflows `datetime` (it ends at year 9999).
LONGEST_SPAN = timedelta(days=36525)
LONGEST_SPAN_TEXT = f"100 years ({LONGEST_SPAN.days}d)"
_END_OF_TIME = datetime.max.replace(tzinfo=UTC)

# A file changed less than this long before it was looked at may change again within its file
# system's timestamp tick, size and times unchanged (git's "racy" rule): what wild keeps of
# such a file (a summary, a parse) is not trusted, and the file is read again next time.
# 2 s: coarser than any file system's timestamp tick wild meets.
RACY_NS = 2_000_000_000

# A file's device, inode, size, and modification and change times (ns): a write, a
# replacement or a `touch` moves one of them, except within the tick of the file's last change.
FileStamp = tuple[int, int, int, int, int]


def file_stamp(info: os.stat_result) -> FileStamp:
    """The stamp of a file `os.stat` just described."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def settled(stamp: FileStamp) -> bool:
    """Whether the file had last changed over RACY_NS before now: a change after now gives
    it newer times, so the same stamp found later means the file did not change since, and
    what was read of it after this stamp was taken may be kept."""
    return max(stamp[3], stamp[4]) < time.time_ns() - RACY_NS


class Clock(Protocol):
    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


def iso(moment: datetime) -> str:
    """`2026-02-08T10:45:23Z`, the form the seed's files use."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(moment: datetime) -> str:
    """Millisecond form, used where two writes in one second must still sort and differ."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_time(text: str | None) -> datetime | None:
    """Tolerant ISO/human date parse; naive times are taken as UTC; garbage gives None."""
    if not text:
        return None
    stripped = text.strip()
    try:
        # The ISO form wild writes parses ~100× faster here than through dateutil.
        parsed = datetime.fromisoformat(stripped)
    except ValueError:
        # dateutil reads almost anything ("T1" becomes a date); insist on a year.
        if not _year().search(stripped):
            return None
        # Imported here: dateutil costs ~5 ms to import and only a hand-written time needs it.
        from dateutil import parser as date_parser  # noqa: PLC0415

        try:
            parsed = date_parser.parse(stripped)
        except (ValueError, OverflowError):
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is before the first moment UTC can hold
        return None


def later(moment: datetime, span: timedelta) -> datetime:
    """`moment + span`, or the end of time where that would pass year 9999 (a date from a file
    near the end, plus any duration, must not overflow)."""
    try:
        return moment + span
    except OverflowError:
        return _END_OF_TIME if span >= timedelta(0) else datetime.min.replace(tzinfo=UTC)


def span_of(seconds: float) -> timedelta | None:
    """`seconds` as a timedelta; None when negative, not a number or longer than LONGEST_SPAN."""
    if not 0 <= seconds <= LONGEST_SPAN.total_seconds():  # NaN fails both comparisons
        return None
    return timedelta(seconds=seconds)


def duration_text(seconds: float | None) -> str:
    """`45s`, `12m05s`, `3h07m`: a duration as a terminal shows it; `-` when unknown."""
    if seconds is None:
        return "-"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
