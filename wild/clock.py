"""Injectable time, so the loop, policy expiry and barrier intervals test deterministically."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Protocol

_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")


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
        if not _YEAR.search(stripped):
            return None
        # Imported here: dateutil costs ~5 ms to import and only a hand-written time needs it.
        from dateutil import parser as date_parser  # noqa: PLC0415

        try:
            parsed = date_parser.parse(stripped)
        except (ValueError, OverflowError):
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
