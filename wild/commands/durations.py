"""Duration flags (`--duration 6h`, `--max-time 90m`): a bad value is a usage error naming
the flag."""

from __future__ import annotations

from datetime import timedelta

from wild.errors import UsageError, WildError


def flag_duration(flag: str, value: str | None) -> timedelta | None:
    """A duration flag's value; a bad one is a usage error (exit 2) naming the flag."""
    from wild.policy.model import parse_duration  # noqa: PLC0415  (only when a flag is given)

    if value is None:
        return None
    try:
        return parse_duration(value)
    except WildError as exc:
        raise UsageError(f"{flag} {value}: {exc}") from None


def flag_seconds(flag: str, value: str | None) -> float | None:
    duration = flag_duration(flag, value)
    return duration.total_seconds() if duration is not None else None
