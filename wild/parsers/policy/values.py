"""The values of human-policy.md: the choices each field takes and the tolerant readers.

`wild.policy.model` reads values with these same functions, so a value the parser accepts is
the value the policy gets.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Literal, TypeVar

from wild.clock import LONGEST_SPAN, span_of
from wild.parsers.numbers import bounded_int

Mode = Literal["interactive", "semi-autonomous", "autonomous", "hands-off"]
AutonomyLevel = Literal["low", "medium", "high"]
EscalationThreshold = Literal["all", "warnings", "critical-only", "never"]
CommandApproval = Literal["required", "trusted"]

MODES: tuple[Mode, ...] = ("interactive", "semi-autonomous", "autonomous", "hands-off")
AUTONOMY_LEVELS: tuple[AutonomyLevel, ...] = ("low", "medium", "high")
THRESHOLDS: tuple[EscalationThreshold, ...] = ("all", "warnings", "critical-only", "never")
APPROVALS: tuple[CommandApproval, ...] = ("required", "trusted")
# Seed 002's interruption modes; the presets module maps each to a full policy.
INTERRUPTION_MODES: tuple[str, ...] = ("wild_night", "balanced", "page_on_alert", "away_but_ping")

_T = TypeVar("_T", bound=str)


def _norm(value: str) -> str:
    """Lower case, spaces and underscores as hyphens: `Semi Autonomous` -> `semi-autonomous`."""
    return re.sub(r"[\s_]+", "-", value.strip().strip("`*.").strip().lower())


def _choose(value: str, choices: tuple[_T, ...], aliases: Mapping[str, _T]) -> _T | None:
    key = _norm(value)
    for choice in choices:
        if choice == key:
            return choice
    return aliases.get(key)


_OFF = re.compile(
    r"\b(?:never|no|not|don'?t|don’t|do\s+not|off|false|none|disabled?|ignore|skip)\b|^-$|^0+$",
    re.IGNORECASE,
)
_ON = re.compile(
    r"\b(?:always|yes|true|on|enabled?|escalate|notify|page|tell|ping)\b", re.IGNORECASE
)
_INT = re.compile(r"\d+")
MOST_COUNT = 1_000_000  # a count over this is a typo, and "never" says what it would mean
_MOST_MINUTES = int(LONGEST_SPAN.total_seconds() // 60)
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
# A part starts where a number does: without the look-behind, a long run of digits and no unit
# is retried from each digit, quadratic in its length (5000 digits took seconds).
_PART = (
    r"(?<![\d.])(\d+(?:\.\d+)?)\s*"
    r"(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])"
)
_PART_RE = re.compile(_PART, re.IGNORECASE)


@functools.cache
def _whole_duration() -> re.Pattern[str]:
    # Compiled when first used (a duration flag, `--duration 6h`): ~1.2 ms, and not on the
    # loop's way to its first agent (issue 22 item 8).
    return re.compile(rf"\s*(?:{_PART}[\s,]*(?:and\s+)?)+", re.IGNORECASE)


def read_mode(value: str) -> Mode | None:
    return _choose(
        _norm(value).removesuffix("-mode"),
        MODES,
        {"semiautonomous": "semi-autonomous", "semi": "semi-autonomous", "handsoff": "hands-off"},
    )


def read_level(value: str) -> AutonomyLevel | None:
    return _choose(value, AUTONOMY_LEVELS, {"med": "medium", "mid": "medium"})


def read_threshold(value: str) -> EscalationThreshold | None:
    return _choose(
        value,
        THRESHOLDS,
        {
            "warning": "warnings",
            "critical": "critical-only",
            "critical-alerts-only": "critical-only",
            "every": "all",
            "any": "all",
            "everything": "all",
            "none": "never",
            "off": "never",
        },
    )


def read_approval(value: str) -> CommandApproval | None:
    return _choose(value, APPROVALS, {"require": "required", "trust": "trusted"})


def read_preset(value: str) -> str | None:
    name = _norm(value).replace("-", "_")
    return name if name in INTERRUPTION_MODES else None


def read_command(value: str) -> str:
    """A notify command; "" means none. One pair of surrounding backticks is Markdown."""
    command = value.strip()
    if len(command) >= 2 and command.startswith("`") and command.endswith("`"):
        command = command[1:-1].strip()
    return "" if _OFF.fullmatch(command) else command


def read_count(value: str) -> int | None:
    """The first whole number ("Escalate after 5 failed attempts" -> 5); "never" is 0."""
    number = _INT.search(value)
    if number is not None:
        return bounded_int(number.group(), MOST_COUNT)
    return 0 if _OFF.search(value) else None


def duration_seconds(value: str, *, whole: bool = False) -> float | None:
    """Sum of `<number><unit>` parts ("6 hours", "1h30m") in seconds, however large; `whole`
    demands nothing else."""
    if whole:
        simple = _simple_duration(value)
        if simple is not None:
            return simple
        if not _whole_duration().fullmatch(value):
            return None
    parts = _PART_RE.findall(value)
    if not parts:
        return None
    return sum(float(amount) * _UNIT_SECONDS[unit[0].lower()] for amount, unit in parts)


def _simple_duration(value: str) -> float | None:
    """`<digits><unit letter>` (`1h`, `90m`: the flags' defaults and most values given) in
    seconds, as the whole-duration pattern reads it, without compiling that pattern; None for
    anything else."""
    number, unit = value[:-1], value[-1:].lower()
    if unit in _UNIT_SECONDS and number.isascii() and number.isdigit():
        return float(number) * _UNIT_SECONDS[unit]
    return None


def read_duration(value: str, *, whole: bool = False) -> timedelta | None:
    """The duration `value` gives; None when it gives none or one over LONGEST_SPAN."""
    seconds = duration_seconds(value, whole=whole)
    return None if seconds is None else span_of(seconds)


def read_minutes(value: str) -> int | None:
    """Whole minutes ("Every 30 minutes", "30m", "1h30m", "hourly", "45"); "none"/"never" is 0.

    None for a span over LONGEST_SPAN: it could not be added to a date.
    """
    seconds = duration_seconds(value)
    if seconds is not None:
        duration = span_of(seconds)
        return None if duration is None else math.ceil(duration.total_seconds() / 60)
    number = _INT.search(value)
    if number is not None:
        return bounded_int(number.group(), _MOST_MINUTES)
    if re.search(r"\bhour(?:ly)?\b", value, re.IGNORECASE):
        return 60
    return 0 if _OFF.search(value) else None


def read_flag(value: str) -> bool | None:
    """ "Always escalate" / "Notify me" -> True; "Never" / "Don't notify me" -> False."""
    if _OFF.search(value):
        return False
    return True if _ON.search(value) else None


def says_off(value: str) -> bool:
    """Whether the value turns something off ("none", "never", "-", "0", "don't" ...)."""
    return _OFF.search(value) is not None
