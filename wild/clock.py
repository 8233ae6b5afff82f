"""Injectable time, so the loop, policy expiry and barrier intervals test deterministically."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

from dateutil import parser as date_parser


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
    try:
        parsed = date_parser.parse(text.strip())
    except (ValueError, OverflowError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
