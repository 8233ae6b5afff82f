"""Alert severities, most urgent first: the one list every part of wild reads them from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeGuard, get_args

Severity = Literal["critical", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)  # most urgent first
# Where a severity sorts among the others: critical work comes before warnings, then info.
RANK: Mapping[str, int] = {name: rank for rank, name in enumerate(SEVERITIES)}


def is_severity(value: object) -> TypeGuard[Severity]:
    """Whether `value` is one of the severities, spelled exactly."""
    return value in RANK


def rank(severity: str) -> int:
    """The sort key of a severity; anything unknown sorts after info."""
    return RANK.get(severity, len(SEVERITIES))


def listed(*, quote: str = "", last: str = " or ") -> str:
    """The severities for a message: `critical, warning or info` (or quoted, or another joiner)."""
    names = [f"{quote}{name}{quote}" for name in SEVERITIES]
    return ", ".join(names[:-1]) + last + names[-1]
